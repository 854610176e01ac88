/**
 * The console's remediation form (`POST /alerts/remediate`): a person asks for the action of the
 * remediation policy covering an alert now, exactly as the Slack app's button does
 * (`Remediator.request`: the policy's own decision, one attempt with a stored idempotency key sent
 * by the send loop, audited with who asked, `console:<who>`). Checked for CSRF and origin like
 * every form before it gets here; refused, changing nothing, to a visitor
 * `server.console.allow.remediate` does not name. What came of it is said on the alert's page.
 */
import type { RemediationRequest, Remediator } from '../remediation/remediator.js';
import { NO_POLICY_TEXT, unsentText } from '../remediation/request-words.js';
import { mayRemediate } from '../config/console-config.js';
import { messagePage, type PageContext } from './layout.js';
import { consolePath } from '../lib/console-paths.js';
import { alertPageAgain } from './acknowledge-actions.js';
import type { FormDeps, FormOutcome } from './silence-actions.js';

/**
 * What the console asks of the remediator: the running one's (`Remediator`), or on the console's
 * thread its offer read there and its request decided by the main thread's.
 */
export interface ConsoleRemediation {
  offer: Remediator['offer'];
  request(...args: Parameters<Remediator['request']>): ConsoleRemediationAnswer | Promise<ConsoleRemediationAnswer>;
}

/**
 * The remediator's decision, or `asked`: on the console's thread, the main thread did not decide
 * within {@link REMEDIATION_DECISION_WAIT_MS} (a statement held it), and decides when it turns.
 */
export type ConsoleRemediationAnswer = RemediationRequest | { outcome: 'asked' };

/**
 * How long the console's thread waits for the main thread's decision before it answers "asked":
 * a person's page never waits on a statement of the engine's, at most this.
 */
export const REMEDIATION_DECISION_WAIT_MS = 1_500;

/** What the form needs. */
export interface RemediateActionDeps extends FormDeps {
  /** The running configuration's remediator; undefined when no policy is configured. */
  remediation: Pick<ConsoleRemediation, 'request'> | undefined;
}

/** `POST /alerts/remediate`: `fp`. */
export async function submitRemediation(
  deps: RemediateActionDeps,
  ctx: PageContext,
  fields: URLSearchParams,
): Promise<FormOutcome> {
  const { logger } = deps;
  const fingerprint = fields.get('fp') ?? '';
  // What the remediator decided against, said on the alert's page: nothing was sent.
  const refused = (text: string) => alertPageAgain(ctx, fingerprint, 409, { kind: 'warn', text });
  if (!mayRemediate(ctx.config.server.console, ctx.who)) {
    logger.warn({ fingerprint, by: ctx.who }, 'console remediation request refused: not in allow.remediate');
    const text = `Sorry: ${ctx.who} may not ask for a remediation from the console (server.console.allow.remediate). Nothing was sent.`;
    return alertPageAgain(ctx, fingerprint, 403, { kind: 'error', text });
  }
  if (!deps.remediation) return refused(NO_POLICY_TEXT);
  const r = await deps.remediation.request(fingerprint, `console:${ctx.who}`, ctx.now);
  if (r.outcome === 'asked') {
    logger.info({ fingerprint, by: ctx.who }, 'remediation asked in the console; the daemon decides when it turns');
    return { redirect: consolePath('/alert', { fp: fingerprint, done: 'remediation-asked' }) };
  }
  if (r.outcome === 'planned') {
    logger.info({ fingerprint, by: ctx.who, policy: r.policy, key: r.key }, 'remediation asked in the console');
    return { redirect: consolePath('/alert', { fp: fingerprint, done: 'remediation' }) };
  }
  if (r.outcome === 'not_found') return { status: 404, body: messagePage('Not found', unsentText(r)) };
  return refused(unsentText(r));
}
