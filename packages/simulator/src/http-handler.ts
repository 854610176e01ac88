/**
 * The simulator's HTTP front: routes `/api/v1/...` requests by the function catalogue, checks the
 * token, its rate limit, parameters, body and idempotency key, applies injected faults, and
 * answers in the `{data}` / `{error:{code,message}}` envelopes. Also serves
 * `GET /api/v1/openapi.json` (no token) and the control interface at `POST /_sim/<method>` (admin
 * token); neither is rate limited.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { FUNCTION_LIST, type FunctionName, type FunctionSpec } from '../../../src/api/functions.js';
import type { ChangeName } from './change-handlers.js';
import type { FaultSpec } from './fault-injector.js';
import { rewriteAnswer } from './fault-rewrites.js';
import { MB } from './fault-streams.js';
import { LOG_TAIL_DEFAULT_LIMIT } from './log-tail.js';
import { buildOpenApi } from './openapi.js';
import { parseBody, parseQuery, type ParamValues } from './request-params.js';
import { SimError } from './sim-error.js';
import { stagingOperation } from './checks/registry.js';
import type { SimulatorControl } from './simulator-control.js';
import type { SimulatorCore } from './simulator-core.js';
import type { Grant } from './token-grants.js';

const API_PREFIX = '/api/v1';
const CONTROL_PREFIX = '/_sim/';
/** How a check's staging operation is named over HTTP: `/_sim/checks.<check>.<operation>`. */
const CHECKS_PREFIX = 'checks.';
/** Bodies above this size are refused: nothing legitimate comes close. */
const MAX_BODY_BYTES = 1_000_000;
const PROXY_502_PAGE =
  '<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>\n';
/**
 * Control methods reachable over HTTP (everything public on SimulatorControl except `state` and
 * `checks`, whose operations are reached as `checks.<check>.<operation>`).
 */
const CONTROL_METHODS = new Set([
  'now',
  'advance',
  'setFault',
  'clearFaults',
  'requests',
  'resetRequests',
  'addRun',
  'failNextRun',
  'setRunState',
  'deleteApp',
  'disableProject',
  'renameApp',
  'setWritesDisabled',
  'setLocked',
  'churn',
  'problems',
  'stats',
  'setMaxLimit',
  'setTimeFormat',
  'setListGrading',
  'setRateLimit',
]);
/** The list size when a call gives no `limit` (reference §8). */
const DEFAULT_LIMIT = 50;
const JSON_TYPE = 'application/json; charset=utf-8';

interface Route {
  spec: FunctionSpec;
  pattern: RegExp;
}

interface Answer {
  status: number;
  body: string;
  contentType: string;
  headers?: Record<string, string>;
}

/** Handles every HTTP request of one simulator. */
export class HttpHandler {
  private readonly routes: Route[] = FUNCTION_LIST.map((spec) => ({
    spec,
    pattern: new RegExp(`^${API_PREFIX}${spec.path.replace('{id}', '([^/]+)')}$`),
  }));
  /** Latency timers still pending, cleared on close so the process can exit. */
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(
    private readonly core: SimulatorCore,
    private readonly control: SimulatorControl,
  ) {}

  /** Cancels pending latency timers and stops streamed bodies (the server closes the connections). */
  close(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.core.streams.close();
  }

  /** The node:http request listener. */
  readonly listener = (req: IncomingMessage, res: ServerResponse): void => {
    this.handle(req, res).catch((err: unknown) => {
      this.core.logger.error({ err }, 'simulator: request failed');
      if (!res.headersSent)
        send(res, errorAnswer(new SimError('internal_error', 'the simulator failed on this request')));
    });
  };

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://simulator');
    const method = req.method ?? 'GET';
    const raw = await readBody(req);
    if (url.pathname === `${API_PREFIX}/openapi.json` && method === 'GET') {
      const host = req.headers.host ?? 'localhost';
      return send(res, json(200, buildOpenApi(`http://${host}${API_PREFIX}`)));
    }
    if (url.pathname.startsWith(CONTROL_PREFIX))
      return send(res, this.controlCall(req, url.pathname.slice(CONTROL_PREFIX.length), method, raw));

    const idempotencyKey = headerOf(req, 'idempotency-key');
    const log = (fn: string, status: number) =>
      this.core.record({
        fn,
        method,
        path: url.pathname,
        query: url.search,
        status,
        ...(idempotencyKey ? { idempotencyKey } : {}),
        at: this.core.now(),
      });
    let match: { route: Route; id: string | undefined } | undefined;
    for (const route of this.routes) {
      const m = route.pattern.exec(url.pathname);
      if (m && route.spec.method === method) match = { route, id: m[1] };
    }
    if (!match) {
      const answer = errorAnswer(new SimError('not_found', `no function answers ${method} ${url.pathname}`));
      log('', answer.status);
      return send(res, answer);
    }
    const spec = match.route.spec;
    const fn = spec.name as FunctionName;
    let grant: Grant;
    let token: string;
    let ctx: { id: number | null; query: ParamValues; body: ParamValues };
    try {
      ({ grant, token } = this.authenticate(req));
      const refused = this.core.rateLimiter.take(token, this.core.now());
      if (refused) {
        const answer = this.rateLimited(
          refused.retryAfterSeconds,
          this.core.rateLimiter.current?.retryAfter ?? 'seconds',
        );
        log(fn, answer.status);
        return send(res, answer);
      }
      if (!grant.has(spec.permission))
        throw new SimError(
          'function_not_allowed',
          `this token does not hold ${spec.name} (needs "${spec.permission}")`,
        );
      ctx = this.parse(spec, match.id, url, raw, req);
    } catch (err) {
      const answer = errorAnswer(asSimError(err, this.core));
      log(fn, answer.status);
      return send(res, answer);
    }

    // Idempotency: decided before any fault or work, so a key in flight is seen as such.
    const scope = `${headerOf(req, 'authorization')}`;
    if (spec.kind === 'change') {
      if (!idempotencyKey) {
        const answer = errorAnswer(
          new SimError('idempotency_key_required', 'a change needs an Idempotency-Key header'),
        );
        log(fn, answer.status);
        return send(res, answer);
      }
      const decision = this.core.idempotency.begin(
        scope,
        idempotencyKey,
        `${spec.name} ${String(ctx.id)} ${canonical(ctx.body)}`,
      );
      if (decision.kind !== 'new') {
        const answer =
          decision.kind === 'replay'
            ? { ...decision.answer, contentType: JSON_TYPE, headers: { 'idempotent-replayed': 'true' } }
            : errorAnswer(
                decision.kind === 'reused'
                  ? new SimError('idempotency_key_reused', 'this Idempotency-Key was used for a different request')
                  : new SimError('request_in_progress', 'a request with this Idempotency-Key is still being handled'),
              );
        log(fn, answer.status);
        return send(res, answer);
      }
    }
    const abandon = () => {
      if (spec.kind === 'change' && idempotencyKey) this.core.idempotency.abandon(scope, idempotencyKey);
    };

    const fault = this.core.faults.take(fn, ctx.id);
    if (fault?.hang || fault?.endless) {
      log(fn, fault.hang ? 0 : 200);
      // Never answered (or never finished); close() ends the connection. The change was never
      // made, so once the client gives up (its connection closes) the key is free again, as after
      // any other fault: a retry with the same key is handled, not refused as "in progress" forever.
      res.once('close', abandon);
      if (fault.hang) return;
      if (fault.latencyMs) await this.delay(fault.latencyMs);
      return this.core.streams.endless(res);
    }
    if (fault?.latencyMs) await this.delay(fault.latencyMs);
    // An endless list gives a full page wherever the client is: its items come from the first page.
    if (fault?.endlessList && spec.paged) ctx.query = { ...ctx.query, offset: 0 };
    const rewrite = (answer: Answer): Answer => {
      if (!fault || answer.contentType !== JSON_TYPE) return answer;
      const limit = (ctx.query.limit as number | undefined) ?? DEFAULT_LIMIT;
      return {
        ...answer,
        body: rewriteAnswer(answer.status, answer.body, fault, {
          token,
          limit,
          freshId: () => this.core.faults.freshId(),
        }),
      };
    };
    const faultAnswer = fault ? this.faultAnswer(fault) : null;
    if (faultAnswer) {
      abandon();
      log(fn, faultAnswer.status);
      return send(res, rewrite(faultAnswer));
    }

    let answer: Answer;
    try {
      const now = this.core.tick();
      const call = { grant, ...ctx, now };
      const data =
        spec.kind === 'change'
          ? this.core.changes.handle(fn as ChangeName, call)
          : this.core.reads.handle(fn as Exclude<FunctionName, ChangeName>, call);
      answer = json(200, { data });
    } catch (err) {
      answer = errorAnswer(asSimError(err, this.core));
    }
    if (spec.kind === 'change' && idempotencyKey) {
      if (answer.status >= 500) abandon();
      else this.core.idempotency.finish(scope, idempotencyKey, { status: answer.status, body: answer.body });
    }
    answer = rewrite(answer);
    log(fn, answer.status);
    if (fault?.hugeMb && answer.status === 200)
      return this.core.streams.huge(res, answer.body, Math.round(fault.hugeMb * MB), fault.hugeDense === true);
    send(res, answer);
  }

  private authenticate(req: IncomingMessage): { grant: Grant; token: string } {
    const header = headerOf(req, 'authorization');
    const m = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (!m) throw new SimError('invalid_token', 'send Authorization: Bearer <token>');
    const token = m[1] as string;
    const grant = this.core.grants.find(token);
    if (!grant) throw new SimError('invalid_token', 'the token is not valid');
    return { grant, token };
  }

  private parse(spec: FunctionSpec, rawId: string | undefined, url: URL, raw: Buffer, req: IncomingMessage) {
    let id: number | null = null;
    if (rawId !== undefined) {
      if (!/^\d+$/.test(rawId))
        throw new SimError(
          'invalid_parameter',
          `the id in the path must be an integer, got "${decodeURIComponent(rawId)}"`,
        );
      id = Number.parseInt(rawId, 10);
    }
    // logs.tail's own default (200) is never refused, even under a smaller maximum.
    const maxLimit =
      spec.name === 'logs.tail' ? Math.max(this.core.maxLimit, LOG_TAIL_DEFAULT_LIMIT) : this.core.maxLimit;
    const query = parseQuery(spec.query, url.searchParams, maxLimit);
    let body: ParamValues = {};
    if (spec.kind === 'change') {
      let parsed: unknown = {};
      if (raw.length > 0) {
        const type = headerOf(req, 'content-type') ?? '';
        if (!type.toLowerCase().includes('application/json'))
          throw new SimError(
            'invalid_request',
            `send the body as Content-Type: application/json (got "${type || 'none'}")`,
          );
        try {
          parsed = JSON.parse(raw.toString('utf8'));
        } catch {
          throw new SimError('invalid_request', 'the body is not valid JSON');
        }
      }
      body = parseBody(spec.body, parsed);
    }
    return { id, query, body };
  }

  private faultAnswer(fault: FaultSpec): Answer | null {
    if (fault.html502) return { status: 502, body: PROXY_502_PAGE, contentType: 'text/html' };
    if (fault.rateLimit) return this.rateLimited(fault.rateLimit.seconds ?? 1, fault.rateLimit.retryAfter);
    if (fault.errorCode) return errorAnswer(new SimError(fault.errorCode, `injected fault: ${fault.errorCode}`));
    if (fault.inventedErrorCodes || fault.errorWord !== undefined) {
      const code = fault.errorWord ?? this.core.faults.freshErrorCode();
      return json(500, { error: { code, message: `injected fault: ${code}` } });
    }
    return null;
  }

  /** 429 rate_limited, saying when to come back in the given form (an HTTP date is in simulator time). */
  private rateLimited(seconds: number, form: 'seconds' | 'date' | 'none'): Answer {
    const answer = errorAnswer(new SimError('rate_limited', 'too many requests; slow down'));
    if (form === 'seconds') answer.headers = { 'retry-after': String(seconds) };
    if (form === 'date') answer.headers = { 'retry-after': new Date(this.core.now() + seconds * 1000).toUTCString() };
    return answer;
  }

  private controlCall(req: IncomingMessage, name: string, method: string, raw: Buffer): Answer {
    try {
      const { grant } = this.authenticate(req);
      if (!grant.admin) throw new SimError('function_not_allowed', 'the control interface needs the admin token');
      const fn = method === 'POST' ? this.controlMethod(name) : undefined;
      if (!fn) throw new SimError('not_found', `no control method POST /_sim/${name}`);
      let args: unknown[] = [];
      if (raw.length > 0) {
        let parsed: unknown;
        try {
          parsed = JSON.parse(raw.toString('utf8'));
        } catch {
          throw new SimError('invalid_request', 'the body is not valid JSON');
        }
        args = Array.isArray(parsed) ? parsed : [parsed];
      }
      let result: unknown;
      try {
        result = fn(...args);
      } catch (err) {
        throw new SimError('invalid_request', err instanceof Error ? err.message : String(err));
      }
      return json(200, { data: result ?? null });
    } catch (err) {
      return errorAnswer(asSimError(err, this.core));
    }
  }

  /** The control method `name` names (`addRun`, `checks.certificates.expire`), bound; undefined when none. */
  private controlMethod(name: string): ((...args: unknown[]) => unknown) | undefined {
    if (name.startsWith(CHECKS_PREFIX)) return stagingOperation(this.control.checks, name.slice(CHECKS_PREFIX.length));
    if (!CONTROL_METHODS.has(name)) return undefined;
    const fn = (this.control as unknown as Record<string, (...a: unknown[]) => unknown>)[name]!;
    return fn.bind(this.control);
  }

  private delay(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        resolve();
      }, ms);
      this.timers.add(timer);
    });
  }
}

function headerOf(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function json(status: number, value: unknown): Answer {
  return { status, body: JSON.stringify(value), contentType: JSON_TYPE };
}

function errorAnswer(err: SimError): Answer {
  return json(err.status, { error: { code: err.code, message: err.message } });
}

function asSimError(err: unknown, core: SimulatorCore): SimError {
  if (err instanceof SimError) return err;
  core.logger.error({ err }, 'simulator: handler failed');
  return new SimError('internal_error', 'the simulator failed on this request');
}

function send(res: ServerResponse, answer: Answer): void {
  if (res.destroyed) return;
  res.writeHead(answer.status, {
    'content-type': answer.contentType,
    'content-length': Buffer.byteLength(answer.body),
    ...answer.headers,
  });
  res.end(answer.body);
}

/** JSON with sorted keys: the same body always gives the same fingerprint. */
function canonical(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
}
