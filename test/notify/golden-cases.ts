/**
 * The messages whose rendering is kept as golden files (`golden.test.ts`) and looked at in a real
 * browser (`email-screenshot.test.ts`): each an alerts notification as delivery hands it to a
 * channel, its events made from what the checks' own detectors find in a snapshot (so a golden
 * file shows their real wording), or, for what no snapshot says (hostile text, a resolution), by
 * hand.
 */
import type { AlertEvent } from '../../src/alerts/alert-event.js';
import { restorePointSchema } from '../../src/api/schemas.js';
import { contextConfigSchema } from '../../src/config/context-config.js';
import { logExcerpt } from '../../src/context/log-excerpt.js';
import { restorePointFacts } from '../../src/context/restore-point-facts.js';
import type { AlertContext } from '../../src/lib/alert-vocabulary.js';
import {
  detectorOptionsFromConfig,
  runDetectors,
  CHECK_CONFIGS,
  type ChecksConfig,
} from '../../src/detectors/registry.js';
import type { Finding } from '../../src/detectors/finding.js';
import type { Snapshot } from '../../src/collectors/snapshot.js';
import type { AlertsNotification } from '../../src/notify/channels/channel.js';
import type { MessageLinks } from '../../src/notify/message-links.js';
import {
  ago,
  appListItem,
  backup,
  backupsSnapshot,
  DAY,
  HOUR,
  MINUTE,
  NOW,
  run,
  runsSnapshot,
  step,
  urlRecord,
  urlsSnapshot,
} from '../detectors/fixtures.js';

/** The links a configured daemon gives its channels: the platform's pages, two check runbooks, a route's. */
export const LINKS: MessageLinks = {
  pages: {
    app: 'https://manage.example.com/apps/{id}',
    run: 'https://manage.example.com/runs/{id}',
    backup: 'https://manage.example.com/backups/{id}',
  },
  checkRunbooks: {
    failed_runs: 'https://wiki.example.com/runbooks/failed-runs',
    backups: 'https://wiki.example.com/runbooks/backups',
  },
  routeRunbooks: { 'prod-oncall': 'https://wiki.example.com/oncall/production' },
};

/** The daemon's config file, as the commands a message prints name it. */
export const CONFIG_FILE = '/etc/deploy-watchdog/config.yaml';

/** Every check with its default options, as a config that says nothing about checks gives them. */
const OPTIONS = detectorOptionsFromConfig(
  Object.fromEntries(
    Object.entries(CHECK_CONFIGS).map(([name, schema]) => [name, schema.parse(undefined)]),
  ) as ChecksConfig,
);

/** What the checks of a snapshot's job find in it, as the registry presents it. */
function found(snapshot: Snapshot): Finding[] {
  return runDetectors(snapshot, OPTIONS, NOW).findings;
}

/** A finding as the lifecycle announces it: first sighting `firedAgoMs` before now. */
function firing(f: Finding, id: number, firedAgoMs = 5 * MINUTE): AlertEvent {
  return {
    ...f,
    id,
    kind: 'firing',
    url: f.url ?? null,
    startsAt: ago(firedAgoMs),
    endsAt: null,
    at: ago(firedAgoMs),
    reason: 'first sighting',
  };
}

/** A failed update of shop-prod (production), run 5981, failed at step install. */
function failedRun(): Finding {
  const failed = run({
    id: 5981,
    state: 'error',
    updated_at: ago(47 * MINUTE),
    steps: [
      step({ name: 'pull_code' }),
      step({
        name: 'install',
        state: 'error',
        reason: 'pip install failed: No matching distribution for odoo-addon-x',
      }),
    ],
  });
  return found(runsSnapshot([failed]))[0]!;
}

/** The context settings a config that says nothing about them gives. */
const CONTEXT = contextConfigSchema.parse(undefined);

/**
 * What the API adds to the failed update of run 5981, made by the reader's own functions: the
 * lines of its setup log around the failure (`lines` as logs.tail answers them, oldest first) and
 * its restore point (kept, a verified backup taken first).
 */
function updateContext(lines: readonly [minutesAgo: number, line: string][], notes: string[] = []): AlertContext {
  const failedAt = NOW - 47 * MINUTE;
  const items = lines.map(([m, line]) => ({ time: ago(m * MINUTE), line, source: 'setup' }));
  const excerpt = logExcerpt(items, { ...CONTEXT.logs, failedAt });
  const point = restorePointSchema.parse({
    id: 412,
    app_id: 1,
    at: ago(52 * MINUTE),
    action: 'update',
    outcome: 'kept',
    run_id: 5981,
    commits: [{ repository: 'shop', before: '9f1c2e4', after: 'a07b3d9' }],
    modules: [],
    backup_id: 77,
    backup: 'shop-prod-20261101-1108.zip',
    backup_verified: true,
    rollback_of_id: null,
    held: false,
    instant_undo: false,
    kept_until: null,
  });
  return { facts: restorePointFacts(point), log: { source: 'setup', ...excerpt }, notes };
}

/** One golden case: its name (the files' stem) and the notification a channel renders. */
export interface GoldenCase {
  name: string;
  notification: AlertsNotification;
}

/** Every case, in the order the golden files are listed. */
export function goldenCases(): GoldenCase[] {
  const shop = appListItem({ id: 1, backup_health: 'critical', last_backup_at: ago(30 * HOUR) });
  const [stale, health] = found(backupsSnapshot([shop], [backup({ id: 500, taken_at: ago(30 * HOUR) })]));
  const [certificate] = found(
    urlsSnapshot([urlRecord({ ssl_expires_at: new Date(NOW + 2 * DAY - MINUTE).toISOString() })]),
  );
  const run = failedRun();
  const group = { check: 'failed_runs', environment_type: 'production' };

  const grouped = [1, 2, 3, 4, 5].map((i) =>
    firing(
      {
        ...run,
        fingerprint: `failed_runs/run/${6000 + i}`,
        subject: { type: 'run', id: 6000 + i },
        labels: { ...run.labels, app: `app-${i}-prod` },
      },
      10 + i,
      (10 + i) * MINUTE,
    ),
  );
  return [
    {
      name: 'failed-run',
      notification: {
        type: 'alerts',
        group,
        events: [firing(run, 1, 47 * MINUTE)],
        omitted: 0,
        routes: ['prod-oncall'],
      },
    },
    {
      // What the API adds after the cycle: the setup log around the failure, errors first, and the restore point.
      name: 'failed-update-context',
      notification: {
        type: 'alerts',
        group,
        events: [
          {
            ...firing(run, 3, 47 * MINUTE),
            context: updateContext([
              [52, 'setup: pulling image'],
              [51, 'setup: building image shop-prod:19.0'],
              [49, 'setup: installing requirements'],
              [48, 'Collecting odoo-addon-x==19.0.1.0'],
              [47, 'ERROR: No matching distribution found for odoo-addon-x'],
              [47, 'setup: step install failed: pip exited with code 1'],
              [10, 'setup: something long after the failure'],
            ]),
          },
        ],
        omitted: 0,
        routes: ['prod-oncall'],
      },
    },
    {
      // The reason why is part 1's to find (from the API); here as a resolved event carries it.
      name: 'resolved-with-reason',
      notification: {
        type: 'alerts',
        group,
        events: [
          {
            ...firing(run, 2, 47 * MINUTE),
            kind: 'resolved',
            endsAt: ago(MINUTE),
            at: ago(MINUTE),
            resolution: 'run #5990 (update of shop-prod) succeeded',
          },
        ],
        omitted: 0,
        routes: ['prod-oncall'],
      },
    },
    {
      name: 'grouped-with-more',
      notification: { type: 'alerts', group, events: grouped, omitted: 7, omittedResolved: 2, routes: ['default'] },
    },
    {
      // The service's backup_health follows the age: two alerts about one app, neither repeating its summary.
      name: 'backup-stale-and-health',
      notification: {
        type: 'alerts',
        group: { check: 'backups', environment_type: 'production' },
        events: [firing(stale!, 20, 4 * HOUR), firing(health!, 21, 4 * HOUR)],
        omitted: 0,
      },
    },
    {
      name: 'certificate-47h',
      notification: {
        type: 'alerts',
        group: { check: 'certificates', environment_type: 'production' },
        events: [firing(certificate!, 30)],
        omitted: 0,
      },
    },
    {
      name: 'hostile-text',
      notification: {
        type: 'alerts',
        group,
        events: [hostileEvent()],
        omitted: 0,
        routes: ['prod-oncall'],
      },
    },
  ];
}

/**
 * Text from the service that tries to be markup, a mention, a link, a reordering, an invisible
 * difference or a new line: every piece must reach the reader as the characters it is.
 */
export const HOSTILE = {
  app: 'shop\u202Egnp.exe',
  summary: 'Update of <b>shop</b> failed <!channel> <script>window.__pwned=1</script>\nBcc: victim@evil.example',
  reason: 'sh\u200Bop <img src=x onerror="window.__pwned=1"> <https://evil.example|click> & `rm -rf /`',
  step: 'install\r\n\r\n<html>',
  /** One long word, as a stack trace's path is: it must not widen the message past a phone's screen. */
  file: `/srv/odoo/addons/${'very_long_module_name_'.repeat(12)}init.py`,
};

function hostileEvent(): AlertEvent {
  const run = failedRun();
  return {
    ...firing(run, 40, 47 * MINUTE),
    summary: HOSTILE.summary,
    labels: { ...run.labels, app: HOSTILE.app },
    url: 'javascript:window.__pwned=1',
    facts: [
      { label: 'Run', value: '#5981' },
      { label: 'Step', value: HOSTILE.step },
      { label: 'Reason', value: HOSTILE.reason },
      { label: 'File', value: HOSTILE.file },
    ],
    brief: `step ${HOSTILE.step}: ${HOSTILE.reason}`,
    // Log lines are the service's text too: markup, a mention, a code fence, a reordering, a
    // terminal's escape sequence and line break, a stack trace's long path.
    context: updateContext(
      [
        [48, `ERROR ${HOSTILE.summary}`],
        [48, `\u001b[31mERROR\u001b[0m ${HOSTILE.reason} \`\`\`\r\nSet-Cookie: x=1`],
        [47, `Traceback: ${HOSTILE.file}`],
      ],
      [`logs not available: ${HOSTILE.reason}`],
    ),
  };
}
