/**
 * `deploy-watchdog demo` end to end, in-process through `main`: the real simulator, Slack
 * stand-in, SMTP sink and daemon, for a short duration. Asserts on what was printed as delivered:
 * each staged problem produced a firing message and a resolved one, the failed run's retry was
 * reported, emails went out for production, the summary was printed, and the temp dir is gone.
 */
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseDemoArgs } from '../../src/cli/demo-command.js';
import { UsageError } from '../../../../src/cli/command.js';
import { runCli, type CliResult } from '../../../../test/helpers/cli-harness.js';

/** One printed Slack message: its header and its event status lines. */
interface Printed {
  header: string;
  events: string[];
  lines: string[];
}

/** Splits the demo's output into the Slack messages it printed. */
function slackMessages(stdout: string): Printed[] {
  const out: Printed[] = [];
  let current: Printed | null = null;
  for (const line of stdout.split('\n')) {
    const start = /^\s*\+[\d.]+s {2}\[slack #ops\] (.*)$/.exec(line);
    if (start) {
      current = { header: start[1] as string, events: [], lines: [] };
      out.push(current);
      continue;
    }
    if (current && line.startsWith('          ')) {
      const text = line.trim();
      current.lines.push(text);
      if (/^\S+ (CRITICAL|WARNING|INFO|RESOLVED|ESCALATED)\b.* · /.test(text)) current.events.push(text);
      continue;
    }
    current = null;
  }
  return out;
}

/** Each staged problem: the header noun of its check's messages and how its event reads. */
const PROBLEMS = [
  ['failed update', /failed run/, /Update of \S+ \(staging\) failed at step check/],
  ['certificate near expiry', /certificate problem/, /Certificate of \S+ for \S+ \(production\) expires/],
  ['stale backup', /backup problem/, /No successful backup of \S+ \(production\) for .+ \(max .+\)/],
  ['off-site upload failure', /backup problem/, /Off-site copy of the newest successful backup of \S+ \(production\)/],
  ['outside check failure', /URL checks? failing/, /does not answer as \S+ \(production\)/],
] as const;

describe('deploy-watchdog demo --duration 20s', () => {
  let result: CliResult;
  let messages: Printed[];

  beforeAll(async () => {
    result = await runCli(['demo', '--duration', '20s', '--seed', '1']);
    messages = slackMessages(result.stdout);
  }, 60_000);

  it('exits 0 with nothing on stderr', () => {
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
  });

  it.each(PROBLEMS)('%s: a firing message and a resolved one', (_name, header, event) => {
    const about = messages.filter((m) => header.test(m.header));
    const firing = about.flatMap((m) => m.events).filter((e) => event.test(e) && !/ RESOLVED\b/.test(e));
    const resolved = about.flatMap((m) => m.events).filter((e) => event.test(e) && / RESOLVED\b/.test(e));
    expect(firing.length, `firing events in ${JSON.stringify(about.map((m) => m.header))}`).toBeGreaterThan(0);
    expect(resolved.length).toBeGreaterThan(0);
  });

  it('starts all green: every alert message is about a staged problem', () => {
    const alertMessages = messages.filter((m) => !m.header.includes('Retried automatically'));
    const staged = [/failed runs?\b/, /certificate problems?/, /backup problems?/, /URL checks? failing/];
    expect(alertMessages.map((m) => m.header).filter((h) => !staged.some((re) => re.test(h)))).toEqual([]);
  });

  it("shows the failed run's alert with the lines of its log and its next step", () => {
    const failed = messages.find((m) => /failed run/.test(m.header) && m.events.some((e) => !/ RESOLVED\b/.test(e)));
    expect(failed?.lines).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^Log \(setup\): \d+ lines? around the failure/),
        expect.stringMatching(
          /^\d\d:\d\d:\d\d {2}setup: ERROR run \d+ \(update\) step check failed: health check timed out after 120 s$/,
        ),
        "Next step: Read the failed step's log, fix the cause, then retry the run.",
      ]),
    );
  });

  it('reports the automatic retry of the failed run and its outcome', () => {
    expect(result.stdout).toMatch(/the service received runs\.retry \(POST \/api\/v1\/runs\/\d+\/retry\) → 200/);
    const notice = messages.find((m) => m.header.includes('Retried automatically: succeeded'));
    expect(notice?.lines).toEqual(
      expect.arrayContaining([expect.stringMatching(/^Policy: retry-failed-updates \(runs\.retry, attempt 1\)$/)]),
    );
  });

  it('emails production problems, firing and resolved', () => {
    expect(result.stdout).toMatch(/\[email ops@example\.com\] Subject: \[deploy-watchdog\] CRITICAL .*\(production\)/);
    expect(result.stdout).toMatch(/\[email ops@example\.com\] Subject: \[deploy-watchdog\] RESOLVED .*\(production\)/);
    // Staging goes to Slack only.
    expect(result.stdout).not.toMatch(/\[email ops@example\.com\] Subject: .*\(staging\)/);
  });

  it('prints a closing summary with every problem told', () => {
    expect(result.stdout).toContain('5 problems staged, 5 announced and cleared:');
    expect(result.stdout).toMatch(
      /✓ failed update, retried by policy +\S+ +fired ✓, resolved ✓, remediation: .*Retried automatically: succeeded/,
    );
    expect(result.stdout).toMatch(/remediation: 1 change made \(runs\.retry /);
  });

  it('shows where the config was written, never a secret, and removes the temp dir', () => {
    const configPath = /config +(\S+deploy-watchdog\.yaml)/.exec(result.stdout)?.[1];
    expect(configPath).toBeDefined();
    expect(fs.existsSync(configPath as string)).toBe(false);
    expect(result.stdout).not.toContain('/services/T0LOCAL/');
    expect(result.stdout).not.toContain('sim-admin-token');
  });
});

describe('deploy-watchdog demo, stopped with Ctrl-C', () => {
  it('stops cleanly after the first message: exit 0 and a summary; --keep keeps the config', async () => {
    const abort = new AbortController();
    const result = await runCli(['demo', '--duration', '2m', '--keep'], {
      signal: abort.signal,
      onOutput: (stdout) => {
        if (!abort.signal.aborted && stdout.includes('[slack #ops]')) abort.abort(new Error('received SIGINT'));
      },
    });
    // --keep keeps the config for a look afterwards; removed here whatever the assertions say.
    const kept = /kept (\S+) \(the config and the state file\)/.exec(result.stdout)?.[1];
    try {
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('stopping (interrupted)');
      expect(result.stdout).toMatch(/Summary \(interrupted, /);
      // Stopped early: the summary tells what was never staged rather than calling it a miss.
      expect(result.stdout).toMatch(/ [0-4] of 5 problems staged/);
      expect(result.stdout).toContain('not staged: the demo stopped before');
      expect(kept).toBeDefined();
      expect(fs.readFileSync(path.join(kept as string, 'deploy-watchdog.yaml'), 'utf8')).toContain(
        '${SLACK_WEBHOOK_URL}',
      );
    } finally {
      if (kept) fs.rmSync(kept, { recursive: true, force: true });
    }
  }, 30_000);
});

describe('parseDemoArgs', () => {
  it.each([
    [[], { durationMs: 60_000, apps: 12, seed: 1, keep: false, quiet: false }],
    [['--duration', '20s', '--apps', '30', '--seed', '7'], { durationMs: 20_000, apps: 30, seed: 7 }],
    [['--duration', '2m'], { durationMs: 120_000 }],
    [['--duration', '1m30s', '--keep', '--quiet'], { durationMs: 90_000, keep: true, quiet: true }],
    [['--duration', '45'], { durationMs: 45_000 }],
  ])('%j', (argv, expected) => {
    expect(parseDemoArgs(argv)).toMatchObject(expected);
  });

  it.each([
    [['--duration', 'soon'], /--duration: "soon" is not a duration/],
    [['--duration', '2s'], /--duration must be between 5s and 1h, got "2s"/],
    [['--duration', '2h'], /--duration must be between 5s and 1h/],
    [['--apps', '0'], /--apps must be a whole number from 1 to 1000, got "0"/],
    [['--apps', 'many'], /--apps must be a whole number/],
    [['--seed', '-1'], /--seed/],
    [['--colour'], /Unknown option '--colour'/],
    [['extra'], /Unexpected argument 'extra'/],
  ])('%j is refused: %s', (argv, message) => {
    expect(() => parseDemoArgs(argv)).toThrow(UsageError);
    expect(() => parseDemoArgs(argv)).toThrow(message);
  });

  it('answers a usage error with exit 2 and the usage', async () => {
    const result = await runCli(['demo', '--apps', '0']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('usage: deploy-watchdog demo');
  });
});
