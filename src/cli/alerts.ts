/**
 * `deploy-watchdog alerts`: the open alerts (pending and firing) of the state file, with their short
 * id (for `ack`), since, status (`acked` when someone has it), severity, check, summary, labels and
 * the silence muting each one, if any.
 */
import { alertId } from '../alerts/alert-id.js';
import { shownDetails } from '../alerts/held-subjects.js';
import { openAlertsView } from '../alerts/open-alerts-view.js';
import { systemClock } from '../lib/clock.js';
import { print } from './command.js';
import { CONFIG_FILE_DEFAULTS } from './config-file.js';
import { loadConfigSection, loadConfigWithUnset } from '../config/load-config.js';
import { Inhibitor } from '../notify/inhibition.js';
import { pendingReason } from '../alerts/pending-reason.js';
import { defineCommand, table, terminalJson, terminalSafe, terminalWidth, withStateStore } from './cli-helpers.js';
import { formatUtc } from '../lib/format-utc.js';

const usage = `usage: deploy-watchdog alerts [--config FILE] [--json]

Lists the open alerts: firing ones, and pending ones waiting for alerts.for cycles or a hold
(each pending one is listed under the table with what it waits for, --json says it in "pending").
Worst first, then oldest. Each shows its id (for \`deploy-watchdog ack\`), since when, its status
(acked: firing, and someone acknowledged it; --json says who), severity, check, summary, labels,
and the id of the silence that mutes its notifications, if one does; an alert another holds back
(notify.inhibit: its server bad, its app stopped) is listed under the table with the alert that
holds it (--json: "inhibitedBy"). On a terminal the table fits its width (a long summary, then
long labels, are cut with …); piped, or with --json, nothing is cut.

  --config FILE   the configuration file (its state.path is the database)
                  (${CONFIG_FILE_DEFAULTS})
  --json          one JSON array instead of a table`;

/**
 * On a terminal, what gives way, in order: LABELS (column 7) down to 16 characters, then SUMMARY
 * (6) down to 30, then the labels to their header and the summary to 10, so that a wide terminal
 * shows the summary whole (what is wrong is read first; the labels are in --json and the console)
 * and 90 columns still hold a row (one without a silence). The id is never cut: it is what `ack`
 * takes.
 */
const FIT_SHRINK = [
  { column: 7, min: 16 },
  { column: 6, min: 30 },
  { column: 7, min: 0 },
  { column: 6, min: 10 },
];

const alerts = defineCommand({
  usage,
  options: { json: { type: 'boolean' } },
  parse: ({ values }) => values,
  run: (values, io, file) =>
    withStateStore(io, file, (store) => {
      const now = systemClock.now();
      const forCycles = loadConfigSection(file, io.env, 'alerts').for;
      const views = openAlertsView(store, now);
      // Held back now by another firing alert (its server bad, its app stopped), as a delivery round decides.
      const inhibitor = new Inhibitor(
        loadConfigWithUnset(file, io.env).config.notify.inhibit,
        views.map((v) => v.alert),
      );
      const rows = views.map((v) => ({
        ...v,
        silence: v.silence?.id ?? null,
        waiting: pendingReason(v.alert, forCycles, now),
        heldBy: inhibitor.causeFor(v.alert),
      }));
      if (values.json) {
        const out = rows.map(({ alert: a, since, silence, waiting, heldBy }) => ({
          id: alertId(a.fingerprint),
          fingerprint: a.fingerprint,
          status: a.status,
          since: formatUtc(since, 'iso'),
          severity: a.severity,
          check: a.check,
          summary: a.summary,
          labels: a.labels,
          details: shownDetails(a.details),
          url: a.url,
          sourceSince: a.since,
          firstSeenAt: formatUtc(a.firstSeenAt, 'iso'),
          lastSeenAt: formatUtc(a.lastSeenAt, 'iso'),
          job: a.job,
          silence,
          inhibitedBy: heldBy ? { id: alertId(heldBy.fingerprint), rule: heldBy.rule } : null,
          ...(a.status === 'pending' ? { pending: waiting } : {}),
          acknowledgement: a.acknowledgement && { ...a.acknowledgement, at: formatUtc(a.acknowledgement.at, 'iso') },
        }));
        return print(io.stdout, `${terminalJson(out)}\n`);
      }
      if (rows.length === 0) return print(io.stdout, 'no open alerts\n');
      const header = ['ID', 'SINCE', 'STATUS', 'SEVERITY', 'CHECK', 'SILENCE', 'SUMMARY', 'LABELS'];
      const body = rows.map(({ alert: a, since, silence }) => [
        alertId(a.fingerprint),
        // To the second: milliseconds only take width from the summary (--json keeps them).
        formatUtc(Math.floor(since / 1000) * 1000, 'iso'),
        a.acknowledgement ? 'acked' : a.status,
        a.severity,
        a.check,
        silence ?? '-',
        a.summary,
        Object.entries(a.labels)
          .filter(([k, v]) => k !== 'check' && v !== undefined)
          .map(([k, v]) => `${k}=${v}`)
          .join(' '),
      ]);
      // On a terminal, one line per alert: the labels give way first, then the summary.
      const width = terminalWidth(io.stdout);
      const fit = width === undefined ? undefined : { width, shrink: FIT_SHRINK };
      io.stdout.write(table([header, ...body], fit));
      // Why each pending one is not told yet: alerts.for, its check's hold, or nothing any more.
      for (const { alert: a, waiting, heldBy } of rows) {
        // A hold's reason may name what the service sent (a step): shown, never obeyed.
        if (waiting.length > 0)
          io.stdout.write(`${alertId(a.fingerprint)} pending: ${terminalSafe(waiting.join('; '))}\n`);
        if (heldBy) {
          const by = `${alertId(heldBy.fingerprint)} (${heldBy.rule}): ${terminalSafe(heldBy.summary)}`;
          io.stdout.write(`${alertId(a.fingerprint)} held back by ${by}\n`);
        }
      }
      const firing = rows.filter((r) => r.alert.status === 'firing').length;
      const acked = rows.filter((r) => r.alert.acknowledgement !== null).length;
      const ackedText = acked > 0 ? `, ${acked} of them acked` : '';
      const held = rows.filter((r) => r.heldBy).length;
      const heldText = held > 0 ? `; ${held} held back by an inhibition` : '';
      return print(
        io.stdout,
        `${rows.length} open (${firing} firing${ackedText}, ${rows.length - firing} pending)${heldText}\n`,
      );
    }),
});

export default alerts;
