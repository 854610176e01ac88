/**
 * The remediation stage: policies decide on open firing alerts inside the cycle's transaction,
 * changes are sent after it commits, the runs they start are followed, and every decision,
 * answer and outcome is written to the audit. Its parts, one file each:
 *
 * 1. `cycle-planner.ts` (inside the cycle transaction, `take`): each policy decides on each alert
 *    it covers. To act, it writes an attempt with its derived idempotency key and body, and an
 *    audit row, in that same transaction. Nothing is sent here: a rollback leaves no trace and
 *    sends nothing.
 * 2. `send-and-follow.ts` (after commit, on its own loop, `lib/background-loop.ts`): every planned
 *    attempt is sent with its STORED key and body. A crash before the answer is recorded leaves the
 *    attempt planned; the next start sends it again with the same key, so the service applies it
 *    at most once. The answer is carried out as the answer table says (`change-answer.ts`): follow
 *    the run, verify a reused key with reads, send the same key again, close a refused attempt,
 *    stop on the record, or suspend the policy (`access_denied`: in the app's environment only)
 *    and raise one alert (`suspension-alerts.ts`). Followed runs are polled with `runs.get` until
 *    they finish or `follow_timeout` passes; the outcome goes to the audit and, as a notice, to
 *    the channels the alert's labels route to.
 * 3. `remediation-audit.ts`: the words and rows of the audit, and the metric.
 *
 * Everything lives in SQLite (migrations 004 and 005): a restart resumes sending and following.
 * Suspensions, whole-policy and per-environment alike, are lifted by `start()`, i.e. when the
 * daemon starts or reloads its config: their causes (token rights, plan, writes disabled) are fixed
 * outside deploy-watchdog, and a restart or reload is how an operator says "fixed". A crash-restart
 * thus tries once more; the worst it can cost is one more refused request per scope, never a change.
 */
import { AlertStore, type AlertRow } from '../alerts/alert-store.js';
import type { MatchableLabels } from '../alerts/matchers.js';
import type { CommittedCycle, CycleStage } from '../alerts/commit-findings.js';
import type { ApiClient } from '../api/client.js';
import type { Config } from '../config/load-config.js';
import { BackgroundLoop } from '../lib/background-loop.js';
import { RepeatedLog } from '../lib/repeated-log.js';
import type { Clock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import type { Notifier } from '../notify/notifier.js';
import type { Metrics } from '../lib/metrics.js';
import { FencedError } from '../state/fenced-error.js';
import type { Store } from '../state/store.js';
import { CyclePlanner, type CycleReport, type PlannerParts, type RequestOutcome } from './cycle-planner.js';
import { compilePolicies, requestablePolicy } from './policy.js';
import { RemediationAudit } from './remediation-audit.js';
import { RemediationStore } from './remediation-store.js';
import { SendAndFollow, type PassReport } from './send-and-follow.js';
import { scopeText } from './suspension.js';
import { commitSuspensionAlerts } from './suspension-alerts.js';
import { runDetailWanted } from './run-detail-wanted.js';

/** What a person's request for a remediation came to ({@link Remediator.request}), named. */
export type RemediationRequest =
  | RequestOutcome
  /** Resolved (a stale click), or pending: nothing to act on, nothing changed. */
  | { outcome: 'not_firing'; alert: AlertRow }
  /** No alert has that fingerprint (any more). */
  | { outcome: 'not_found' };

/** The parts of the notification pipeline remediation uses. */
export type RemediationNotifier = Pick<
  Notifier,
  'take' | 'notice' | 'router' | 'lifecycleRepeatIntervalMs' | 'progressChannels'
>;

/** What a remediator is built from: one running configuration's parts. */
export interface RemediationParts {
  /** `remediation`, and the run state words of `checks` its following reads. */
  config: Pick<Config, 'remediation' | 'checks'>;
  client: ApiClient;
  store: Store;
  notifier: RemediationNotifier;
  clock: Clock;
  logger: Logger;
  metrics?: Metrics;
}

/** The remediation stage of one running configuration: a stage of `commitFindings`, and a loop. */
export class Remediator implements CycleStage {
  /** What the planner is built from: the stores, the settings and policies, the audit, the log. */
  readonly #p: PlannerParts;
  readonly #clock: Clock;
  readonly #planner: CyclePlanner;
  readonly #loop: BackgroundLoop<PassReport>;
  /**
   * Whether an automatic policy waits on a failed run's detail, by the labels its list item gives
   * (`run-detail-wanted.ts`); undefined when none can.
   */
  readonly runDetailWanted: ((labels: MatchableLabels) => boolean) | undefined;

  constructor(parts: RemediationParts) {
    const { config, store, clock, notifier } = parts;
    const settings = config.remediation;
    const log = parts.logger.child({ stage: 'remediation' });
    const rs = new RemediationStore(store);
    const alerts = new AlertStore(store);
    const policies = compilePolicies(settings);
    const audit = new RemediationAudit(rs, parts.metrics);
    const alertSuspensions = (now: number) => commitSuspensionAlerts(rs, alerts, notifier, log, now);
    this.#p = { store, rs, alerts, settings, policies, audit, log, alertSuspensions };
    this.#planner = new CyclePlanner(this.#p);
    const sender = new SendAndFollow({
      ...this.#p,
      client: parts.client,
      clock,
      runStates: {
        failed: config.checks.failed_runs.failed_states,
        active: config.checks.stuck_runs.active_states,
        succeeded: config.checks.failed_runs.succeeded_states,
      },
      backupStates: config.checks.backups,
      pollMs: settings.poll_interval,
      notifier,
    });
    // A store that is down fails every pass: said once a minute with a count, not at every pass.
    const quiet = new RepeatedLog(log, { clock });
    this.#loop = new BackgroundLoop<PassReport>({
      clock,
      pass: (signal) => sender.pass(signal),
      sleepMs: () => sender.nextWakeIn(),
      onError: (err) =>
        err instanceof FencedError
          ? log.debug({ reason: err.reason }, 'remediation pass ended: no longer the leader')
          : quiet.error({ err }, 'remediation pass failed'),
      merge: (a, b) => ({ sent: a.sent + b.sent, polled: a.polled + b.polled, finished: a.finished + b.finished }),
    });
    this.runDetailWanted = runDetailWanted(policies, settings.enabled);
    this.#clock = clock;
  }

  /**
   * Decides on every open firing alert and records planned attempts (keys before any request)
   * and audit rows. Call INSIDE the cycle's transaction, after the lifecycle; sends nothing.
   */
  inCycle(now: number): CycleReport {
    return this.#planner.inCycle(now);
  }

  /**
   * The stage of `commitFindings`: {@link inCycle} inside the cycle's transaction, then a wake-up
   * of the send loop. The loop runs only after this synchronous transaction has committed (or
   * rolled back, leaving nothing to send).
   */
  take(cycle: CommittedCycle): void {
    const report = this.inCycle(cycle.now);
    if (report.planned > 0 || report.dryRun > 0)
      this.#p.log.debug({ job: cycle.job, ...report }, 'remediation decided');
    // Woken now, the loop resumes on a later tick: after this synchronous transaction ends.
    if (report.planned > 0) this.#loop.wake();
  }

  /**
   * Sends due planned attempts with their stored keys, handles the answers, polls followed runs
   * and queues outcome notices. Call after the cycle commits (`check` does, where no loop runs);
   * `start()` also runs it on a loop. Concurrent calls share one pass.
   */
  executePending(signal?: AbortSignal): Promise<PassReport> {
    return this.#loop.runNow(signal);
  }

  /**
   * What a person could ask for on an alert now, as a button says it ("Retry now"): the action of
   * the first policy that covers it (`requestablePolicy`); undefined when none does, or the alert
   * is not firing. Whether it acts when asked is decided then ({@link request}).
   */
  offer(fingerprint: string): string | undefined {
    const alert = this.#p.alerts.get(fingerprint);
    return alert
      ? requestablePolicy(this.#p.policies, this.#p.settings.enabled, alert)?.policy.action.words.request
      : undefined;
  }

  /**
   * A person asks for the action of the policy covering an alert now (the Slack app's Retry now):
   * decided and recorded in one transaction of its own, as a cycle decides (`CyclePlanner.onRequest`),
   * with `asker` (`slack:alice (U0123)`) in the audit; an attempt planned is sent at once by the
   * loop, with its stored key. A second request while it is under way, or after the attempts are
   * used up, plans nothing and says why.
   */
  request(fingerprint: string, asker: string, now: number): RemediationRequest {
    const result = this.#p.store.transaction((): RemediationRequest => {
      const alert = this.#p.alerts.get(fingerprint);
      if (!alert) return { outcome: 'not_found' };
      if (alert.status !== 'firing') return { outcome: 'not_firing', alert };
      return this.#planner.onRequest(alert, asker, now);
    });
    if (result.outcome === 'planned') this.#loop.wake();
    return result;
  }

  /** Lifts suspensions (see the file comment) and starts the send-and-follow loop. */
  start(): void {
    if (this.#loop.started) return;
    const now = this.#clock.now();
    this.#p.store.transaction(() => {
      for (const s of this.#p.rs.clearSuspensions()) {
        this.#p.audit.resumed(s, now);
        this.#p.log.info(
          { policy: s.policy, code: s.code, scope: scopeText(s.scope) },
          'remediation policy suspension lifted',
        );
      }
      this.#p.alertSuspensions(now);
    });
    this.#loop.start();
  }

  /**
   * Stops the loop: lets the pass under way finish for up to `deadlineMs`, then aborts it. An
   * aborted send leaves its attempt planned: the next start sends the same key again.
   */
  stop(deadlineMs = 10_000): Promise<void> {
    return this.#loop.stop(deadlineMs);
  }
}
