/**
 * `deploy-watchdog actions`: the remediation audit trail. Every decision (acted, skipped and why,
 * dry run), every answer of the service and every outcome, oldest first, with its policy, record,
 * the record's environment, idempotency key and run.
 */
import { listAudit, type AuditRow } from '../remediation/remediation-store.js';
import { print, UsageError } from './command.js';
import { CONFIG_FILE_DEFAULTS } from './config-file.js';
import { defineCommand, table, terminalJson, withStateStore } from './cli-helpers.js';
import { formatUtc } from '../lib/format-utc.js';

const usage = `usage: deploy-watchdog actions [--config FILE] [--json] [--limit N] [--policy NAME]

Lists what remediation decided and did, oldest first: time, policy, action, record, environment
(of the record's app; "-" outside any, or for a row about no record), decision, reason, answer and
outcome, idempotency key, run.

  --config FILE   the configuration file (its state.path is the database)
                  (${CONFIG_FILE_DEFAULTS})
  --json          one JSON array instead of a table
  --limit N       only the newest N rows (default 200; 0 for all)
  --policy NAME   only this policy's rows`;

const DEFAULT_LIMIT = 200;

const HEADER = ['TIME', 'POLICY', 'ACTION', 'RECORD', 'ENV', 'DECISION', 'ANSWER', 'OUTCOME', 'KEY', 'RUN', 'REASON'];

const actions = defineCommand({
  usage,
  options: { json: { type: 'boolean' }, limit: { type: 'string' }, policy: { type: 'string' } },
  parse: ({ values }) => ({ ...values, limit: parseLimit(values.limit) }),
  run: (values, io, file) =>
    withStateStore(io, file, (store) => {
      // listAudit reads an option given as undefined as not given: no limit, every policy.
      const rows = listAudit(store, { limit: values.limit, policy: values.policy });
      if (values.json) return print(io.stdout, `${terminalJson(rows.map(toJson))}\n`);
      if (rows.length === 0) return print(io.stdout, 'no remediation decisions recorded\n');
      const body = rows.map((r) => [
        formatUtc(r.at, 'iso'),
        r.policy,
        r.action,
        r.recordType === null ? '-' : `${r.recordType} #${r.recordId}`,
        r.environment ?? '-',
        r.decision,
        r.answer ?? '-',
        r.outcome ?? '-',
        r.key ?? '-',
        r.runId === null ? '-' : `#${r.runId}`,
        r.reason,
      ]);
      return print(io.stdout, table([HEADER, ...body]));
    }),
});

function parseLimit(text: string | undefined): number | undefined {
  if (text === undefined) return DEFAULT_LIMIT;
  if (!/^\d+$/.test(text)) throw new UsageError(`--limit must be a whole number, got ${JSON.stringify(text)}`);
  const n = Number(text);
  return n === 0 ? undefined : n;
}

function toJson(r: AuditRow) {
  return {
    at: formatUtc(r.at, 'iso'),
    policy: r.policy,
    action: r.action,
    record: r.recordType === null ? null : { type: r.recordType, id: r.recordId },
    environment: r.environment,
    fingerprint: r.fingerprint,
    decision: r.decision,
    reason: r.reason,
    answer: r.answer,
    outcome: r.outcome,
    idempotencyKey: r.key,
    runId: r.runId,
    detail: r.detail,
  };
}

export default actions;
