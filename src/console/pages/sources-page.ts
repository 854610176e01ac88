/**
 * `/sources`: whether the watchdog can see what it watches and tell what it finds. First how soon
 * it told new problems (`time-to-alert-section.ts`), then per job: its
 * schedule, its last complete cycle, failures in a row and the last error, a job switched off for
 * a missing permission, and readiness as `/readyz` says it. The API as the metrics count it:
 * requests by function, refusals for the rate limit (429), errors by code, and the request budget
 * (each job's requests an hour, and which job is stretched to fit). The notifications
 * waiting in the outbox per channel, and a channel's pause or failure streak.
 */
import { SourceHealthStore } from '../../alerts/source-health-store.js';
import { JOB_NAMES } from '../../collectors/collectors.js';
import { channelStates, OutboxStore } from '../../notify/outbox-store.js';
import type { ReadinessCheck } from '../../server/readiness-check.js';
import type { Store } from '../../state/store.js';
import { html, type SafeHtml } from '../html.js';
import { getOrAdd } from '../../lib/get-or-add.js';
import { parseTokenVisibility, TOKEN_VISIBILITY_KEY, type TokenVisibility } from '../../collectors/token-visibility.js';
import { age, page, time, type PageContext, dataTable } from '../layout.js';
import { timeToAlertSection } from './time-to-alert-section.js';

/**
 * What the page shows of the running daemon, as the main thread has it (`daemonFigures`), or on
 * the console's thread as the main thread last sent it: readiness as `/readyz` says it, and the
 * values of the API's counters.
 */
export interface DaemonFigures {
  readiness: ReadinessCheck[];
  apiRequests: CounterValue[];
  apiErrors: CounterValue[];
}

/** What the page reads besides the state file. */
export interface SourcesInputs extends DaemonFigures {
  /** The enabled jobs with their schedule. */
  jobs: ReadonlyMap<string, string>;
}

/** One labelled value of a counter, as prom-client's `get()` gives it. */
export interface CounterValue {
  labels: Partial<Record<string, string | number>>;
  value: number;
}

/** One API function's traffic, as the counters have it since the daemon started. */
interface ApiTraffic {
  requests: number;
  rateLimited: number;
  errors: Map<string, number>;
}

/** The sources page. */
export function sourcesPage(inputs: SourcesInputs, ctx: PageContext): SafeHtml {
  const { jobs, readiness } = inputs;
  const { store, config } = ctx;
  const health = new SourceHealthStore(store);
  const ready = new Map(readiness.map((c) => [c.check, c]));
  const traffic = apiTraffic(inputs);
  const backlog = new OutboxStore(store).backlog();
  const states = channelStates(store);
  const body = html` <h1>Sources</h1>
    ${timeToAlertSection(store, ctx.now)}
    <section>
      <h2>Jobs</h2>
      ${dataTable(
        'jobs',
        ['Job', 'Schedule', 'Last complete cycle', 'Last attempt', 'Failures in a row', 'Last error', 'Ready'],
        JOB_NAMES.map((job) => {
          const row = health.get(job);
          const check = ready.get(`job:${job}`);
          const schedule = jobs.get(job);
          return html`<tr data-job="${job}" class="${check && !check.ok ? 'bad' : ''}">
              <td>${job}</td>
              <td>${schedule === undefined ? html`<span class="muted">off</span>` : html`<code>${schedule}</code>`}</td>
              <td>
                ${row?.lastSuccessAt ? html`${age(row.lastSuccessAt, ctx.now)} ago` : html`<span class="muted">never</span>`}
              </td>
              <td>${time(row?.lastAttemptAt ?? null)}</td>
              <td>${row?.consecutiveFailures ?? 0}</td>
              <td>
                ${row?.disabledReason ? html`<strong>disabled:</strong> ${row.disabledReason}` : (row?.lastError ?? '')}
              </td>
              <td>
                ${check ? html`<span class="${check.ok ? 'ok' : 'error'}">${check.ok ? 'yes' : 'no'}</span> <span class="muted">${check.detail}</span>` : html`<span class="muted">-</span>`}
              </td>
            </tr>`;
        }),
      )}
      ${readiness
        .filter((c) => !c.check.startsWith('job:') && c.check !== 'request_budget')
        .map(
          (c) =>
            html`<p>
              ${c.check}: <span class="${c.ok ? 'ok' : 'error'}">${c.ok ? 'ok' : 'not ok'}</span> ${c.detail}
            </p>`,
        )}
    </section>
    ${tokenSection(store, ctx)}
    <section>
      <h2>API</h2>
      <p class="hint">
        Since the daemon started · client rate limit
        ${config.api.requests_per_second === Infinity ? 'off' : `${config.api.requests_per_second} requests/s`} ·
        ${config.api.base_url}
      </p>
      <p data-budget>
        Request budget:
        ${ready.get('request_budget')?.detail ?? html`<span class="muted">not counted yet (the estate is counted at start)</span>`}
      </p>
      ${dataTable(
        'api',
        ['Function', 'Requests', 'Rate limited (429)', 'Errors by code'],
        [...traffic].map(
          ([fn, t]) =>
            html`<tr>
              <td><code>${fn}</code></td>
              <td>${t.requests}</td>
              <td class="${t.rateLimited > 0 ? 'warn' : ''}">${t.rateLimited}</td>
              <td>${[...t.errors].map(([code, n]) => html`<span class="label">${code}: ${n}</span> `)}</td>
            </tr>`,
        ),
        'No request yet.',
      )}
    </section>
    <section>
      <h2>Outbox</h2>
      ${dataTable(
        'outbox',
        [
          'Channel',
          'Kind',
          'Waiting to be sent',
          'Held',
          'Oldest waiting',
          'Paused until',
          'Failures in a row',
          'Last error',
        ],
        config.notify.channels.map((c) => {
          const b = backlog.get(c.name);
          const s = states.get(c.name);
          return html`<tr data-channel="${c.name}">
              <td>${c.name}</td>
              <td>${c.type}</td>
              <td>${b?.pending ?? 0}</td>
              <td>${b?.held ?? 0}</td>
              <td>${b?.oldest ? html`${age(b.oldest, ctx.now)} ago` : '-'}</td>
              <td>${time(s?.pausedUntil ?? null)}</td>
              <td>${s?.consecutiveFailures ?? 0}</td>
              <td>${s?.lastError ?? ''}</td>
            </tr>`;
        }),
      )}
    </section>`;
  return page({ title: 'Sources', current: '/sources', ctx, body });
}

/** Requests, 429s and errors per API function, from the metrics' counters. */
function apiTraffic(figures: DaemonFigures): Map<string, ApiTraffic> {
  const out = new Map<string, ApiTraffic>();
  const of = (fn: string) => getOrAdd(out, fn, (): ApiTraffic => ({ requests: 0, rateLimited: 0, errors: new Map() }));
  for (const v of figures.apiRequests) {
    const t = of(String(v.labels.function));
    t.requests += v.value;
    if (v.labels.status === '429') t.rateLimited += v.value;
  }
  for (const v of figures.apiErrors) {
    const t = of(String(v.labels.function));
    const code = String(v.labels.code);
    t.errors.set(code, (t.errors.get(code) ?? 0) + v.value);
  }
  return new Map([...out].sort(([a], [b]) => a.localeCompare(b)));
}

/**
 * What the token can read, as learned at the last start or reload (`token-visibility.ts`): what it
 * cannot see first, then its level per namespace and, per environment, whether it lists and reads.
 */
function tokenSection(store: Store, ctx: PageContext): SafeHtml {
  const seen = parseTokenVisibility(store.getMeta(TOKEN_VISIBILITY_KEY));
  if (!seen) {
    return html`<section>
      <h2>Token</h2>
      <p class="empty">Not learned yet: the daemon learns what its token can read when it starts.</p>
    </section>`;
  }
  const readById = (e: TokenVisibility['environments'][number]) =>
    e.listed === null
      ? 'its list failed'
      : !e.listed
        ? 'no app listed'
        : e.readById === 'refused'
          ? 'listed; reads by id refused'
          : e.readById === 'allowed'
            ? 'listed and read by id'
            : 'listed; read by id unknown';
  return html`<section>
    <h2>Token</h2>
    <p class="hint">Learned ${age(seen.learnedAt, ctx.now)} ago, at the last start or reload.</p>
    ${seen.limits.map((limit) => html`<p class="warn" data-limit>${limit}</p>`)}
    ${seen.limits.length === 0 ? html`<p class="ok">It reads every environment it lists, by id too.</p>` : ''}
    <p>
      ${
        seen.levels === null
          ? html`<span class="muted">whoami did not say its level per namespace</span>`
          : seen.levels.map((l) => html`<span class="label">${l.namespace}: ${l.level}</span> `)
      }
    </p>
    ${dataTable(
      'token',
      ['Environment', 'Apps'],
      seen.environments.map((e) => html`<tr><td>${e.type}</td><td>${readById(e)}</td></tr>`),
    )}
  </section>`;
}
