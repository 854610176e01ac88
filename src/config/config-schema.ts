/**
 * The configuration file's schema. Every object is strict (an unknown key is a typo until proven
 * otherwise), every default lives here, and the `Config` type is inferred from it: durations come
 * out in milliseconds, `off` as `null`, secrets as {@link Secret}.
 *
 * Cross-references between sections (a route naming a channel, unique names) are checked in
 * `config-references.ts`, on the raw document, so they are reported alongside every other problem.
 */
import { STATED_VALUES, type StatedField } from '../api/extra-values.js';
import { z } from 'zod';
import { consoleConfigSchema, consoleServing } from './console-config.js';
import { CHECK_CONFIGS } from '../detectors/registry.js';
import { channelConfigSchema } from '../notify/channels/registry.js';
import { notifySchema, repeatIntervalSchema } from '../notify/notify-schema.js';
import { policyConfigSchema } from '../remediation/actions/registry.js';
import { byteSizeSchema } from './byte-size.js';
import { scheduleSchema } from './cron.js';
import { DURATION_HINT, durationSchema, offOr, parseDuration, positiveDurationSchema } from './duration.js';
import { addProblem, nonEmptySchema, wholeNumberSchema } from './schema-blocks.js';
import { wordListSchema } from './check-config.js';
import { secretSchema, secretUrlOf } from './secret.js';

// ---------------------------------------------------------------------------------------------
// Building blocks
// ---------------------------------------------------------------------------------------------

/**
 * `host:port`, `[v6]:port` or `:port` (every interface), kept as written: the health listener
 * (`parseListen` in `parse-listen.ts`) takes this string.
 */
const listenSchema = z
  .string()
  .trim()
  .regex(/^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]*):\d{1,5}$/, 'must be HOST:PORT (e.g. 127.0.0.1:9464), :PORT, or "off"')
  .refine((text) => {
    const port = Number(text.slice(text.lastIndexOf(':') + 1));
    return port >= 1 && port <= 65_535;
  }, 'port must be between 1 and 65535');

/**
 * The client-side rate limit: requests per second, or `off` for none, which parses to Infinity (not
 * null) so the client and the maintenance cost estimate use it like any other rate. `off` is for a
 * local or generously provisioned service, where the limit would only slow the watchdog down.
 */
const requestsPerSecondSchema = z.union([z.literal('off').transform(() => Infinity), z.number().positive().max(1000)], {
  error: 'must be "off" or a number of requests per second above 0 and at most 1000',
});

// ---------------------------------------------------------------------------------------------
// Sections
// ---------------------------------------------------------------------------------------------

/**
 * `api.extra_values`: values beyond those the reference states (§3) a real service sends, each read
 * as the stated value it means. Checked here: the field must be one whose values the reference
 * states, the meaning one of those values, the extra value not one already.
 */
const extraValuesSchema = z
  .partialRecord(
    z.enum(Object.keys(STATED_VALUES) as [StatedField, ...StatedField[]]),
    z.record(nonEmptySchema, z.string()),
  )
  .default({})
  .superRefine((extra, ctx) => {
    for (const [field, values] of Object.entries(extra) as [StatedField, Record<string, string>][]) {
      const stated: readonly string[] = STATED_VALUES[field];
      for (const [value, meant] of Object.entries(values)) {
        if (stated.includes(value)) addProblem(ctx, [field, value], `is already a stated value of ${field}`);
        else if (!stated.includes(meant))
          addProblem(
            ctx,
            [field, value],
            `must be one of the values the reference states for ${field}: ${stated.join(', ')}`,
          );
      }
    }
  })
  .describe(
    'Values beyond those the reference states (§3) that this service sends, per field, each read as the stated value it means: { ssl_status: { revoked: error } }. A record with an unlisted one is set aside (its alerts held) and a watchdog alert names the key to set.',
  );

const apiSchema = z
  .strictObject({
    base_url: z
      .url({
        protocol: /^https?$/,
        error: (iss) =>
          iss.input === undefined ? 'is required' : 'must be an http(s) URL such as https://manage.example.com',
      })
      .refine((u) => !/\/api\/v1\/?$/.test(u), 'must be the service root, without /api/v1 (it is added)')
      // base_url is no secret (the console and the logs show it): a password in it would be shown.
      .refine(
        (u) => !/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*@/i.test(u),
        'must not carry a user or password (value not shown); the service takes api.token',
      )
      .transform((u) => u.replace(/\/+$/, ''))
      .describe('Root of the Deployment Management Service; the API is {base_url}/api/v1.'),
    token: secretSchema.optional().describe('API token (use ${VAR}); exactly one of token and token_file.'),
    token_file: nonEmptySchema
      .optional()
      .describe('File holding the API token, read at load and trimmed; relative to the config file.'),
    namespaces: wordListSchema([]).describe('Namespace codes to watch; empty: every namespace the token reaches.'),
    requests_per_second: requestsPerSecondSchema
      .prefault(10)
      .describe(
        'Client-side rate limit (requests per second, all jobs together); "off": none, for a local or generously provisioned service.',
      ),
    timeout: positiveDurationSchema.prefault('30s').describe('Time limit of one request.'),
    max_retries: wholeNumberSchema(0, 10).default(3).describe('Retries of a failed read (429, 5xx, network).'),
    page_size: wholeNumberSchema(1, 1000)
      .default(500)
      .describe(
        "`limit` of list calls. The reference states no maximum: a list whose service refuses it is read with smaller pages (down to the reference's 50), once per function, with a warning that says what to set here.",
      ),
    max_answer_size: byteSizeSchema
      .refine((n) => n >= 1024 * 1024 && n <= 1024 ** 3, 'must be from 1MiB to 1GiB')
      .prefault('8MiB')
      .describe(
        'The largest answer read; a larger one (or an endless one) fails with "answer too large". A page of 1,000 records is under 1MiB; answers past 1MiB are read and parsed one at a time, and one of 8MiB costs the daemon about 50MB while it is parsed (16MiB: ~110MB, too near a 256MB container).',
      ),
    max_answer_values: wholeNumberSchema(10_000, 100_000_000)
      .default(250_000)
      .describe(
        'The most JSON values (objects, arrays, members) an answer over 1MiB may hold before it is parsed: what parsing builds, not the bytes, is what costs memory.',
      ),
    max_list_items: wholeNumberSchema(1_000, 100_000_000)
      .default(200_000)
      .describe(
        'The most items one list walk reads: a list that says it holds more, or never ends, fails with "list too long" instead of growing without bound.',
      ),
    extra_values: extraValuesSchema,
    zoneless_timestamps: z
      .enum(['refuse', 'utc'])
      .default('refuse')
      .describe(
        'Timestamps without a time zone (2026-11-24T08:00:00): the reference states no format. refuse: each record with one is set aside, its alerts held, and a watchdog alert names this key; utc: read as UTC. Set utc only when the service writes its times in UTC.',
      ),
    concurrency: wholeNumberSchema(1, 32)
      .default(4)
      .describe(
        "Requests in flight at once within one job's read: per-record reads go this many at a time, and list walks read one page ahead when it is 2 or more.",
      ),
  })
  .superRefine((api, ctx) => {
    const given = Number(api.token !== undefined) + Number(api.token_file !== undefined);
    if (given === 0) {
      addProblem(ctx, ['token'], 'is required: give token (e.g. ${DMS_API_TOKEN}) or token_file');
    } else if (given === 2) {
      addProblem(ctx, ['token_file'], 'give token or token_file, not both');
    }
  });

/** The SQLite file when `state` names neither a file nor a PostgreSQL URL. */
export const DEFAULT_STATE_PATH = './deploy-watchdog.db';

/**
 * `state.url`: a PostgreSQL URL, itself a credential (it holds the password): checked to be a
 * postgres:// URL before it becomes a {@link Secret}, with messages that never show it. Its
 * example is also what `validate` checks in its place when its `${VAR}` is not set.
 */
const postgresUrlSchema = secretUrlOf(
  /^postgres(ql)?$/,
  'a postgres:// URL',
  'postgres://watchdog@db.example.com:5432/watchdog',
);

/** `state.tls`: how the PostgreSQL connection is secured. */
const stateTlsSchema = z.strictObject({
  ca_file: nonEmptySchema
    .optional()
    .describe(
      "PEM file of the CA(s) to trust for the server's certificate, instead of the system's; relative to the config file.",
    ),
  reject_unauthorized: z
    .boolean()
    .default(true)
    .describe(
      "Refuse a server whose certificate is not trusted or does not name the URL's host. false encrypts without checking who answers: for a test server only.",
    ),
});

/** A timeout of the PostgreSQL connection, within sane bounds. */
const stateTimeoutSchema = (fallback: string, max: string, what: string) =>
  durationSchema
    .refine((ms) => ms >= 1_000 && ms <= parseDuration(max), `must be from 1s to ${max}`)
    .prefault(fallback)
    .describe(what);

/** `state.leader`: the leader election of replicas sharing a PostgreSQL state (`src/state/leader-election.ts`). */
const stateLeaderSchema = z.strictObject({
  lease: durationSchema
    .refine((ms) => ms >= 2_000 && ms <= 300_000, 'must be from 2s to 5m')
    .prefault('10s')
    .describe(
      'With url (PostgreSQL): how long the leader lease lasts unless renewed. The leader renews it every quarter of it and stops acting when it could not for three quarters; another replica takes over once it has expired (after a crash within about 1.25 times it; after a stop at its next try, within a quarter). Default 10s.',
    ),
});

/** The `state` section: a SQLite file (the default), or a PostgreSQL database. */
const stateSchema = z
  .strictObject({
    path: nonEmptySchema
      .optional()
      .describe(
        `SQLite file (created with mode 0600); relative to the config file. Default ${DEFAULT_STATE_PATH} unless url is given; give path or url, not both.`,
      ),
    url: postgresUrlSchema
      .optional()
      .describe(
        'PostgreSQL (13 or newer) instead of a SQLite file: postgres://user:password@host:port/database (use ${VAR}; a secret, never shown). The database must exist; the daemon creates its tables.',
      ),
    tls: stateTlsSchema
      .optional()
      .describe(
        "TLS to PostgreSQL, overriding the URL's ssl… parameters; without it, the URL says (sslmode=require, verify-full…).",
      ),
    connect_timeout: stateTimeoutSchema('5s', '5m', 'How long connecting to PostgreSQL may take.'),
    statement_timeout: stateTimeoutSchema(
      '30s',
      '10m',
      'How long one PostgreSQL statement may take; past it, and past a silent server, the work fails with a clear error and is tried again later.',
    ),
    leader: stateLeaderSchema
      .prefault({})
      .describe(
        'With url (PostgreSQL): two or more replicas share the state and one of them, the leader, does the work; the others serve the console and their probes, and take over when it is gone.',
      ),
    retention: positiveDurationSchema
      .prefault('30d')
      .describe(
        'Resolved alerts, events, sent notifications, audit rows and finished remediation attempts (of alerts no longer open) older than this are deleted.',
      ),
  })
  .superRefine((state, ctx) => {
    if (state.path !== undefined && state.url !== undefined) {
      addProblem(ctx, ['url'], 'give path (a SQLite file) or url (PostgreSQL), not both');
    }
    if (state.tls !== undefined && state.url === undefined) {
      addProblem(ctx, ['tls'], 'applies to url (PostgreSQL) only; there is no url');
    }
  });

const jobSchema = (fallback: string) =>
  scheduleSchema
    .prefault(fallback)
    .describe(`Cron schedule (5 fields, 6 with seconds, or @hourly … @yearly), or "off". Default "${fallback}".`);

const jobsSchema = z.strictObject({
  runs: jobSchema('*/1 * * * *'),
  attention: jobSchema('*/5 * * * *'),
  urls: jobSchema('*/15 * * * *'),
  backups: jobSchema('0 * * * *'),
  maintenance: jobSchema('*/30 * * * *'),
  servers: jobSchema('*/1 * * * *'),
  installers: jobSchema('*/5 * * * *'),
  jitter: durationSchema
    .prefault('5s')
    .describe('Random delay before each job, so many watchdogs do not hit the API at once.'),
  read_ceiling: durationSchema
    .optional()
    .describe(
      'The longest one read of a job may take, whatever its schedule (default 15m): a hard bound for hostile answers (a list that never ends), far above any honest read. A read cut there fires alerts for what it read and resolves nothing. A read that takes longer than its schedule is not cut: it finishes, and the ticks it overran are skipped and counted (deploy_watchdog_job_overruns_total).',
    ),
  deadline: z
    .union([z.literal('auto'), durationSchema], { error: `must be "auto" or ${DURATION_HINT}` })
    .optional()
    .meta({ deprecated: true })
    .describe(
      'Deprecated: use read_ceiling. Accepted for old configs: a duration is taken as read_ceiling (when that is not given); "auto" is ignored, since a read that overruns its schedule now finishes.',
    ),
});

/** Each check's section (its schema lives in its module, `src/detectors/<check>.ts`), and `sources`. */
const checksSchema = z.strictObject({
  ...CHECK_CONFIGS,
  sources: z
    .strictObject({
      failure_threshold: wholeNumberSchema(1, 1000)
        .default(3)
        .describe('Consecutive failed cycles of a source before a "cannot read" alert.'),
    })
    .prefault({}),
});

const alertsSchema = z.strictObject({
  repeat_interval: repeatIntervalSchema
    .prefault('4h')
    .describe('Re-notify a still-firing alert this often; "off": never.'),
  send_resolved: z.boolean().default(true).describe('Notify when an alert is over.'),
  for: wholeNumberSchema(1, 100).default(1).describe('Consecutive cycles a problem must be seen before it fires.'),
  resolve_guard: z
    .strictObject({
      min_alerts: wholeNumberSchema(1, 100_000)
        .default(5)
        .describe('A cycle is suspect only when it would resolve at least this many alerts of its job at once…'),
      max_share: z
        .number()
        .min(0)
        .max(1)
        .default(0.5)
        .describe("…and more than this share of the job's firing alerts."),
      confirm_cycles: wholeNumberSchema(1, 100)
        .default(2)
        .describe('Consecutive suspect cycles (that one included) before those alerts resolve; 1 turns the guard off.'),
    })
    .prefault({})
    .describe(
      'A complete answer that suddenly holds far fewer of the problems the last one held (an empty list from a misconfigured token or a broken proxy) resolves nothing until consecutive cycles confirm it.',
    ),
});

const remediationSchema = z.strictObject({
  enabled: z.boolean().default(false),
  dry_run: z.boolean().default(true).describe('Log what would be done, change nothing.'),
  max_actions_per_hour: wholeNumberSchema(0, 1000).default(10),
  follow_timeout: positiveDurationSchema
    .prefault('2h')
    .describe('How long a started run is followed before its outcome is reported unknown.'),
  poll_interval: durationSchema
    .refine((ms) => ms >= 1_000, 'must be at least 1s')
    .prefault('30s')
    .describe('How often a run started by a change is read again (runs.get) while it is followed.'),
  during_silence: z
    .enum(['hold', 'act'])
    .default('hold')
    .describe(
      "hold: a silence in force (a maintenance window, someone at work on the app) holds the automatic moves on the alerts it mutes; act: they go on. A person's button acts either way.",
    ),
  policies: z.array(policyConfigSchema).default([]),
});

const serverSchema = z
  .strictObject({
    listen: offOr(listenSchema, 'HOST:PORT')
      .prefault('127.0.0.1:9464')
      .describe('Where /healthz, /readyz, /metrics and the console listen; "off" for none.'),
    console: consoleConfigSchema.prefault({}),
  })
  .superRefine((server, ctx) => {
    // Asked for in so many words, a console that would be refused is a configuration error.
    const serving = consoleServing(server.listen, server.console);
    if (server.console.enabled === true && !serving.serve) {
      addProblem(ctx, ['console', 'enabled'], `is true, but ${serving.message}`);
    }
  });

const logSchema = z.strictObject({
  level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  format: z.enum(['auto', 'json', 'pretty']).default('auto').describe('auto: pretty on a terminal, JSON otherwise.'),
  repeat_every: durationSchema
    .prefault('1m')
    .describe(
      'A warning or error that repeats (an outage failing every retry) is said once per this, with a count of the rest.',
    ),
});

/** The whole configuration file. */
export const configSchema = z.strictObject({
  api: apiSchema,
  state: stateSchema.prefault({}),
  jobs: jobsSchema.prefault({}),
  checks: checksSchema.prefault({}),
  alerts: alertsSchema.prefault({}),
  // The channels first, as the file lists them; the rest is the pipeline's own schema.
  notify: z.strictObject({ channels: z.array(channelConfigSchema).default([]), ...notifySchema.shape }).prefault({}),
  remediation: remediationSchema.prefault({}),
  server: serverSchema.prefault({}),
  log: logSchema.prefault({}),
});

/** What {@link configSchema} parses to, before `token_file` is read and paths are resolved. */
export type ParsedConfig = z.output<typeof configSchema>;
