import { randomBytes } from 'node:crypto';
import { FUNCTIONS } from '../../../../src/api/functions.js';
import {
  environmentTypeSchema,
  ERROR_STATUS,
  type EnvironmentType,
  type ErrorCode,
} from '../../../../src/api/schemas.js';
import { createLogger } from '../../../../src/lib/logger.js';
import { startSimulator, type SimulatorOptions } from '../index.js';
import { RETRY_AFTER_FORMS, type RateLimitSpec } from '../rate-limiter.js';
import { STATE_WORD_SETS, type StateWordSet } from '../state-words.js';
import { TIME_FORMATS, type TimeFormat } from '../time-format.js';
import type { FaultSpec, FaultTarget } from '../fault-injector.js';
import type { SimTokenSpec } from '../token-grants.js';
import { LIST_GRADINGS, type ListGrading } from '../read-handlers.js';
import { BACKUP_RESULTS, type BackupOutcome, type BackupResult } from '../backup-outcome.js';
import { parseDuration } from '../../../../src/config/duration.js';
import { parseCommandArgs, reportFailure } from '../../../../src/cli/cli-helpers.js';
import { EXIT, UsageError, type Command } from '../../../../src/cli/command.js';

const usage = `usage: deploy-watchdog simulator [--port P] [--host H] [--apps N] [--seed S] [--token T] [MODES]

Serves a simulated Deployment Management Service (seeded data, runs that move with time) until
Ctrl-C. Prints the base URL and the admin token it accepts; the control interface is at
POST {base URL}/_sim/<method> with that token.

  --port P    port to listen on (default 4010; 0 picks a free one)
  --host H    address to bind (default 127.0.0.1)
  --apps N    number of apps, 1 to 10000 (default 50)
  --seed S    seed of the generated data (default 1)
  --token T   admin token to accept (default: a random one, printed)

Modes: where the API reference leaves a choice open, choose differently (default: the friendliest).
  --max-limit N          largest list \`limit\` (default 1000); above it: 400 invalid_parameter
                         naming the maximum (logs.tail always accepts its default 200)
  --time-format F        how timestamps are written, the instant always the same:
                           iso       2026-11-24T08:00:00.000Z (default)
                           iso-ms    2026-11-24T08:00:00.000000Z (microseconds)
                           offset    2026-11-24T13:30:00+05:30 (offsets vary, never UTC)
                           space     2026-11-24 08:00:00Z or 2026-11-24 13:30:00+05:30
                           mixed     each instant in one of the four above (seeded)
                           zoneless  2026-11-24T08:00:00 (UTC wall time, no zone: ambiguous)
  --rate-limit RPS       a token bucket per bearer token of RPS requests a second (fractions
                         allowed), refilled in real time; over it: 429 rate_limited
  --rate-burst N         requests at once after a quiet spell (default RPS rounded up, at least 1)
  --retry-after FORM     what a 429 says: seconds (default), date (an HTTP date) or none
  --scoped-token SPEC    an extra token, repeatable:
                         TOKEN[:read=ENVS][:get=ENVS][:change=ENVS][:namespaces=CODES]
                         with ENVS from production,staging,development, or none; what is not
                         limited is all (every permission, namespace and environment); get=
                         limits reads by id alone (lists show what they refuse), e.g.
                         ops-token:read=staging,development:change=development
  --fault FN=KIND[:ARG]  a fault on every call of FN (a dotted name such as apps.list, or *),
                         repeatable; faults of one FN combine. KIND is one of:
                           error:CODE  latency:MS  hang  html502  malformedJson  wrongType
                           rateLimit:seconds|date|none
                           huge:MB      200 with a valid JSON body of MB megabytes, streamed
                           hugeDense:MB the same, padded with an array of zeros (many tiny values)
                           endless      200 with a JSON body that never ends (1 MB / 10 ms)
                           echoToken    the caller's token in a record's id and a text field
                           endlessList  lists answer total 1000000000 and fresh ids on every page
                           totalOff:N   lists answer their total off by N (-100: short by 100)
                           unreadableTime:ID|first  one record's first timestamp written unparseably
                           oddValue:FIELD=VALUE[@ID]  one record's FIELD (a path: urls.0.ssl_status)
                                        set to VALUE (JSON, else a string), e.g.
                                        urls.list=oddValue:ssl_status=revoked
                           inventedErrorCodes  a 500 with an error code the reference does not
                                        list, new at every answer
  --list-grading G       whether lists are graded by the environments a token reads: environment
                         (default: lists show only what reads by id give) or none (only reads by
                         id are graded, as the reference states: a list names records that get
                         refuses with access_denied)
  --backup-outcome R[:D] how backups end after their run is done: verified (default: verified
                         and copied off-site at once), unverified, or offsite_failed (verified,
                         its off-site copy failed); :D makes it take D (e.g. 5m), unverified and
                         uploading meanwhile
  --state-words W        the words of \`state\` fields: default, or alt (another plausible service:
                         runs pending/in_progress/succeeded/failed, backups in_progress/success/error,
                         servers up/down/failed/off…; the daemon needs its checks.* state lists set)

At run time, the control interface switches modes: POST /_sim/setMaxLimit [N], setTimeFormat ["F"],
setRateLimit [{"rps":R,"burst":N,"retryAfter":"date"}] or [null], setListGrading ["none"],
checks.backups.setOutcome [{"result":"unverified","settleMs":300000}],
setFault ["FN", {"hugeMb":5}].`;

const ENVIRONMENTS = environmentTypeSchema.options;

function integer(name: string, raw: string | undefined, fallback: number, min: number, max: number): number {
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new UsageError(`--${name} must be an integer, got "${raw}"`);
  const value = Number.parseInt(raw, 10);
  if (value < min || value > max) throw new UsageError(`--${name} must be from ${min} to ${max}, got ${value}`);
  return value;
}

function oneOf<const T extends string>(name: string, raw: string, values: readonly T[]): T {
  if (!(values as readonly string[]).includes(raw))
    throw new UsageError(`--${name} must be one of ${values.join(', ')}, got "${raw}"`);
  return raw as T;
}

/** --rate-limit, --rate-burst and --retry-after as one spec; the last two need the first. */
function rateLimitOf(values: {
  'rate-limit'?: string;
  'rate-burst'?: string;
  'retry-after'?: string;
}): RateLimitSpec | undefined {
  const raw = values['rate-limit'];
  if (raw === undefined) {
    const orphan =
      values['rate-burst'] !== undefined ? 'rate-burst' : values['retry-after'] !== undefined ? 'retry-after' : null;
    if (orphan) throw new UsageError(`--${orphan} needs --rate-limit`);
    return undefined;
  }
  const rps = /^\d+(\.\d+)?$/.test(raw) ? Number(raw) : NaN;
  if (!(rps > 0)) throw new UsageError(`--rate-limit must be a number of requests per second above 0, got "${raw}"`);
  return {
    rps,
    ...(values['rate-burst'] === undefined
      ? {}
      : { burst: integer('rate-burst', values['rate-burst'], 1, 1, 1_000_000) }),
    retryAfter: oneOf('retry-after', values['retry-after'] ?? 'seconds', RETRY_AFTER_FORMS),
  };
}

/** `TOKEN[:read=ENVS][:get=ENVS][:change=ENVS][:namespaces=CODES]`: every permission, limited as it says. */
function scopedToken(raw: string): SimTokenSpec {
  const [token = '', ...parts] = raw.split(':');
  if (!/^\S{8,}$/.test(token))
    throw new UsageError(
      `--scoped-token: the token must be at least 8 characters without spaces or colons, got "${raw}"`,
    );
  const spec: SimTokenSpec = { token, namespaces: '*', permissions: '*' };
  const seen = new Set<string>();
  for (const part of parts) {
    const m = /^(read|get|change|namespaces)=(.+)$/.exec(part);
    if (!m)
      throw new UsageError(
        `--scoped-token: "${part}" is not read=ENVS, get=ENVS, change=ENVS or namespaces=CODES (in "${raw}")`,
      );
    const [, key, list] = m as unknown as [string, 'read' | 'get' | 'change' | 'namespaces', string];
    if (seen.has(key)) throw new UsageError(`--scoped-token: ${key}= is given twice in "${raw}"`);
    seen.add(key);
    const items = list === 'none' ? [] : list.split(',');
    if (key === 'namespaces') {
      if (items.length === 0 || items.some((c) => c === ''))
        throw new UsageError(`--scoped-token: namespaces= needs namespace codes, comma-separated (in "${raw}")`);
      spec.namespaces = items;
      continue;
    }
    const bad = items.find((e) => !(ENVIRONMENTS as readonly string[]).includes(e));
    if (bad !== undefined)
      throw new UsageError(
        `--scoped-token: ${key}= takes ${ENVIRONMENTS.join(', ')} (comma-separated) or none, got "${bad}"`,
      );
    spec[SCOPED_KEYS[key]] = items as EnvironmentType[];
  }
  return spec;
}

/** The environments each key of a scoped token limits. */
const SCOPED_KEYS = {
  read: 'readEnvironments',
  get: 'readByIdEnvironments',
  change: 'changeEnvironments',
} as const;

/** What each `--fault` KIND sets, and whether it takes an argument. */
const FAULT_KINDS: Record<string, { arg: string | null; spec(arg: string, raw: string): FaultSpec }> = {
  error: {
    arg: 'CODE',
    spec: (arg, raw) => {
      if (!Object.hasOwn(ERROR_STATUS, arg))
        throw new UsageError(
          `--fault: "${arg}" is not an error code of the API (in "${raw}"); e.g. internal_error, unavailable`,
        );
      return { errorCode: arg as ErrorCode };
    },
  },
  latency: { arg: 'MS', spec: (arg) => ({ latencyMs: integer('fault latency', arg, 0, 1, 600_000) }) },
  hang: { arg: null, spec: () => ({ hang: true }) },
  html502: { arg: null, spec: () => ({ html502: true }) },
  malformedJson: { arg: null, spec: () => ({ malformedJson: true }) },
  wrongType: { arg: null, spec: () => ({ wrongType: true }) },
  rateLimit: {
    arg: 'seconds|date|none',
    spec: (arg) => ({ rateLimit: { retryAfter: oneOf('fault rateLimit', arg, RETRY_AFTER_FORMS) } }),
  },
  huge: { arg: 'MB', spec: (arg) => ({ hugeMb: integer('fault huge', arg, 1, 1, 100_000) }) },
  hugeDense: {
    arg: 'MB',
    spec: (arg) => ({ hugeMb: integer('fault hugeDense', arg, 1, 1, 100_000), hugeDense: true }),
  },
  endless: { arg: null, spec: () => ({ endless: true }) },
  echoToken: { arg: null, spec: () => ({ echoToken: true }) },
  endlessList: { arg: null, spec: () => ({ endlessList: true }) },
  totalOff: {
    arg: 'N',
    spec: (arg) => {
      const off = integer('fault totalOff', arg.replace(/^-/, ''), 0, 1, 1_000_000);
      return { totalOff: arg.startsWith('-') ? -off : off };
    },
  },
  unreadableTime: {
    arg: 'ID|first',
    spec: (arg) => ({
      unreadableTime: arg === 'first' ? {} : { id: integer('fault unreadableTime', arg, 1, 1, 2 ** 31 - 1) },
    }),
  },
  oddValue: { arg: 'FIELD=VALUE[@ID]', spec: oddValue },
  inventedErrorCodes: { arg: null, spec: () => ({ inventedErrorCodes: true }) },
};

/** `FIELD=VALUE[@ID]`: VALUE as JSON when it parses (`null`, `42`), else as a string. */
function oddValue(arg: string, raw: string): FaultSpec {
  const m = /^([A-Za-z0-9_.]+)=(.*?)(?:@(\d+))?$/.exec(arg);
  if (!m) throw new UsageError(`--fault: oddValue takes FIELD=VALUE[@ID] (in "${raw}")`);
  const [, field, text, id] = m as unknown as [string, string, string, string | undefined];
  let value: unknown = text;
  try {
    value = JSON.parse(text);
  } catch {
    // a plain word: the string itself
  }
  return { recordField: { field, value, ...(id !== undefined && { id: Number(id) }) } };
}

/** `FN=KIND[:ARG]` as a target and a fault. */
function fault(raw: string): [FaultTarget, FaultSpec] {
  const m = /^([^=]+)=([A-Za-z0-9]+)(?::(.+))?$/.exec(raw);
  if (!m) throw new UsageError(`--fault must be FUNCTION=KIND[:ARG], got "${raw}"`);
  const [, target, kind, arg] = m as unknown as [string, string, string, string | undefined];
  if (target !== '*' && !Object.hasOwn(FUNCTIONS, target))
    throw new UsageError(
      `--fault: "${target}" is not a function; give a dotted name such as apps.list, or * (in "${raw}")`,
    );
  const known = Object.hasOwn(FAULT_KINDS, kind) ? FAULT_KINDS[kind] : undefined;
  if (!known) throw new UsageError(`--fault: unknown kind "${kind}"; kinds: ${Object.keys(FAULT_KINDS).join(', ')}`);
  if (known.arg !== null && arg === undefined)
    throw new UsageError(`--fault: ${kind} needs :${known.arg} (in "${raw}")`);
  if (known.arg === null && arg !== undefined) throw new UsageError(`--fault: ${kind} takes no argument (in "${raw}")`);
  return [target as FaultTarget, known.spec(arg ?? '', raw)];
}

/** `--backup-outcome R[:D]`: the result, and how long after its run a backup takes it. */
function backupOutcomeOf(raw: string): BackupOutcome {
  const [result, settle] = raw.split(':', 2);
  const settleMs = settle === undefined ? 0 : parseDurationArg('backup-outcome', settle);
  return { result: oneOf<BackupResult>('backup-outcome', result ?? '', BACKUP_RESULTS), settleMs };
}

function parseDurationArg(name: string, raw: string): number {
  try {
    return parseDuration(raw);
  } catch {
    throw new UsageError(`--${name}: "${raw}" is not a duration such as 30s or 5m`);
  }
}

/** One line per mode that is not the default, for the start-up message. */
function describeModes(options: SimulatorOptions, faults: Map<FaultTarget, FaultSpec>): string[] {
  const lines: string[] = [];
  if (options.maxLimit !== undefined) lines.push(`max limit: ${options.maxLimit}`);
  if (options.timeFormat !== undefined) lines.push(`time format: ${options.timeFormat}`);
  if (options.stateWords !== undefined) lines.push(`state words: ${options.stateWords}`);
  if (options.listGrading !== undefined) lines.push(`list grading: ${options.listGrading}`);
  const backups = options.backupOutcome;
  if (backups) lines.push(`backups end ${backups.result}, ${backups.settleMs ?? 0} ms after their run`);
  const rate = options.rateLimit;
  if (rate)
    lines.push(
      `rate limit: ${rate.rps}/s per token, burst ${rate.burst ?? Math.max(1, Math.ceil(rate.rps))}, Retry-After ${rate.retryAfter ?? 'seconds'}`,
    );
  for (const t of options.tokens ?? []) {
    const envs = (list: string[] | undefined) =>
      list === undefined ? 'all' : list.length === 0 ? 'none' : list.join(',');
    lines.push(
      `scoped token ${t.token}: reads ${envs(t.readEnvironments)}, changes ${envs(t.changeEnvironments)}, namespaces ${t.namespaces === '*' ? 'all' : t.namespaces.join(',')}`,
    );
  }
  for (const [target, spec] of faults) lines.push(`fault on ${target}: ${JSON.stringify(spec)}`);
  return lines;
}

/** `deploy-watchdog simulator`: the fake service, for demos and out-of-process tests. */
const simulator: Command = {
  usage,
  async run(argv, io) {
    let options: SimulatorOptions & { port: number; host: string; apps: number; seed: number; adminToken: string };
    const faults = new Map<FaultTarget, FaultSpec>();
    try {
      const { values } = parseCommandArgs(argv, {
        port: { type: 'string', short: 'p' },
        host: { type: 'string' },
        apps: { type: 'string', short: 'n' },
        seed: { type: 'string', short: 's' },
        token: { type: 'string', short: 't' },
        'max-limit': { type: 'string' },
        'time-format': { type: 'string' },
        'rate-limit': { type: 'string' },
        'rate-burst': { type: 'string' },
        'retry-after': { type: 'string' },
        'scoped-token': { type: 'string', multiple: true },
        fault: { type: 'string', multiple: true },
        'state-words': { type: 'string' },
        'list-grading': { type: 'string' },
        'backup-outcome': { type: 'string' },
      });
      if (values.token !== undefined && !/^\S{8,}$/.test(values.token))
        throw new UsageError('--token must be at least 8 characters without spaces');
      const adminToken = values.token ?? `sim-${randomBytes(16).toString('hex')}`;
      const tokens = (values['scoped-token'] ?? []).map(scopedToken);
      const taken = new Set([adminToken]);
      for (const t of tokens) {
        if (taken.has(t.token))
          throw new UsageError(`--scoped-token: the token "${t.token}" is given twice (or is the admin token)`);
        taken.add(t.token);
      }
      for (const [target, spec] of (values.fault ?? []).map(fault))
        faults.set(target, { ...faults.get(target), ...spec });
      const rateLimit = rateLimitOf(values);
      options = {
        port: integer('port', values.port, 4010, 0, 65_535),
        host: values.host ?? '127.0.0.1',
        apps: integer('apps', values.apps, 50, 1, 10_000),
        seed: integer('seed', values.seed, 1, 0, 2 ** 31 - 1),
        adminToken,
        ...(values['max-limit'] === undefined
          ? {}
          : { maxLimit: integer('max-limit', values['max-limit'], 1000, 1, 1_000_000) }),
        ...(values['time-format'] === undefined
          ? {}
          : { timeFormat: oneOf<TimeFormat>('time-format', values['time-format'], TIME_FORMATS) }),
        ...(rateLimit ? { rateLimit } : {}),
        ...(values['state-words'] === undefined
          ? {}
          : { stateWords: oneOf<StateWordSet>('state-words', values['state-words'], STATE_WORD_SETS) }),
        ...(tokens.length > 0 ? { tokens } : {}),
        ...(values['list-grading'] === undefined
          ? {}
          : { listGrading: oneOf<ListGrading>('list-grading', values['list-grading'], LIST_GRADINGS) }),
        ...(values['backup-outcome'] === undefined ? {} : { backupOutcome: backupOutcomeOf(values['backup-outcome']) }),
      };
    } catch (err) {
      return reportFailure(io, usage, err);
    }
    const logger = createLogger({ level: io.env.LOG_LEVEL ?? 'warn', format: 'json', destination: io.stderr });
    const sim = await startSimulator({ ...options, logger });
    // Namespace codes come from the seed, so they can only be checked once it is made.
    const codes = [...sim.control.state.namespaces.values()].map((n) => n.code);
    const unknown = (options.tokens ?? []).flatMap((t) =>
      t.namespaces === '*' ? [] : t.namespaces.filter((c) => !codes.includes(c)),
    );
    if (unknown.length > 0) {
      await sim.close();
      return reportFailure(
        io,
        usage,
        new UsageError(
          `--scoped-token: no namespace ${unknown.map((c) => `"${c}"`).join(', ')} in this seed; its namespaces are ${codes.join(', ')}`,
        ),
      );
    }
    for (const [target, spec] of faults) sim.control.setFault(target, spec);
    io.stdout.write(
      [
        `simulator listening on ${sim.baseUrl} (API root ${sim.baseUrl}/api/v1, ${options.apps} apps, seed ${options.seed})`,
        ...describeModes(options, faults),
        `token: ${sim.adminToken}`,
        `try: curl -H "Authorization: Bearer ${sim.adminToken}" ${sim.baseUrl}/api/v1/attention`,
        '',
      ].join('\n'),
    );
    if (!io.signal.aborted)
      await new Promise<void>((resolve) => io.signal.addEventListener('abort', () => resolve(), { once: true }));
    await sim.close();
    io.stdout.write('simulator stopped\n');
    return EXIT.ok;
  },
};

export default simulator;
