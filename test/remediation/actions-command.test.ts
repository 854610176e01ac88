/** `deploy-watchdog actions`, run in-process through `main` against a state file the remediator wrote. */
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, writeConfig } from '../helpers/cli-harness.js';
import { appOf, configText, Harness, MINUTE } from './remediation-fixture.js';

const SECTION = `
enabled: true
dry_run: false
policies:
  - { name: retry-check, action: runs.retry, match: { step: check } }
`;

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** Runs one command line, capturing both streams. */
const run = (...argv: string[]) => runCli(argv);

/** A state file with one retried run (acted, answered, succeeded) and one production skip. */
async function withHistory(): Promise<{ file: string; runId: number; prodRunId: number; key: string }> {
  h = await Harness.start(SECTION);
  const run = h.sim.control.addRun({
    appId: appOf(h.sim, 'staging'),
    action: 'update',
    state: 'error',
    failedStep: 'check',
  });
  const prod = h.sim.control.addRun({
    appId: appOf(h.sim, 'production'),
    action: 'update',
    state: 'error',
    failedStep: 'check',
  });
  await h.cycleAndPass({ runs: [run.id, prod.id] });
  h.clock.advance(10 * MINUTE);
  await h.pass();
  const file = writeConfig(h.dir, configText(SECTION, 'state: { path: ./state.db }'), 'watchdog.yaml');
  return { file, runId: run.id, prodRunId: prod.id, key: `dw-${h.installation}.1-retry-check-run${run.id}-a1` };
}

describe('actions', () => {
  it('lists the audit as a table', async () => {
    const { file, runId, prodRunId, key } = await withHistory();
    const { code, stdout } = await run('actions', '--config', file);
    expect(code).toBe(0);
    const lines = stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(
      /^TIME\s+POLICY\s+ACTION\s+RECORD\s+ENV\s+DECISION\s+ANSWER\s+OUTCOME\s+KEY\s+RUN\s+REASON$/,
    );
    expect(lines).toHaveLength(5);
    expect(stdout).toMatch(new RegExp(`run #${prodRunId} +production +skipped .*production_not_named`));
    expect(stdout).toMatch(new RegExp(`run #${runId} +staging +acted .*${key.replace('.', '\\.')}`));
    expect(stdout).toMatch(
      new RegExp(`outcome .*succeeded .*${key.replace('.', '\\.')} +#${runId} +Retried automatically: succeeded`),
    );
  });

  it('--json gives every field', async () => {
    const { file, runId, key } = await withHistory();
    const { code, stdout } = await run('actions', '--config', file, '--json', '--policy', 'retry-check');
    expect(code).toBe(0);
    const rows = JSON.parse(stdout) as Record<string, unknown>[];
    expect(rows.map((r) => r.decision)).toEqual(['skipped', 'acted', 'answered', 'outcome']);
    expect(rows[3]).toMatchObject({
      policy: 'retry-check',
      action: 'runs.retry',
      record: { type: 'run', id: runId },
      environment: 'staging',
      outcome: 'succeeded',
      idempotencyKey: key,
      runId,
      at: '2026-11-01T12:10:00Z',
    });
  });

  it('--limit keeps the newest rows', async () => {
    const { file } = await withHistory();
    const { stdout } = await run('actions', '--config', file, '--json', '--limit', '1');
    expect((JSON.parse(stdout) as { decision: string }[]).map((r) => r.decision)).toEqual(['outcome']);
  });

  it.each([
    [
      'no config file',
      [],
      'no configuration file: give --config FILE, set $DEPLOY_WATCHDOG_CONFIG, or create /dev/null/',
    ],
    ['a bad --limit', ['--limit', 'ten'], '--limit must be a whole number'],
    ['an unknown option', ['--verbose'], "Unknown option '--verbose'"],
  ])('%s: exit 2 with the usage', async (_what, args, message) => {
    const { file } = await withHistory();
    const argv = args.length === 0 ? ['actions'] : ['actions', '--config', file, ...args];
    const { code, stderr } = await run(...argv);
    expect(code).toBe(2);
    expect(stderr).toContain(message);
    expect(stderr).toContain('usage: deploy-watchdog actions');
  });

  it('a bad config: exit 2 naming the problem', async () => {
    const { file } = await withHistory();
    fs.writeFileSync(file, 'api: { base_url: nope }\nremediation: { enabled: maybe }\n');
    const { code, stderr } = await run('actions', '--config', file);
    expect(code).toBe(2);
    expect(stderr).toContain('configuration is not valid');
    expect(stderr).toContain('remediation.enabled');
  });

  it('an empty audit says so', async () => {
    h = await Harness.start(SECTION);
    const file = writeConfig(h.dir, configText(SECTION, 'state: { path: ./state.db }'), 'watchdog.yaml');
    const { code, stdout } = await run('actions', '--config', file);
    expect(code).toBe(0);
    expect(stdout).toBe('no remediation decisions recorded\n');
  });
});
