/**
 * `alerts` on a terminal fits its width: long labels, then a long summary, are cut with …; piped,
 * or with --json, every character is kept. Cut or not, the service's text never acts on the
 * terminal.
 */
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { finding, fireFindings, tempState, type TempState } from '../alerts/fixtures.js';
import { runCli, writeStateCommandConfig } from '../helpers/cli-harness.js';

const LONG_SUMMARY =
  'Update of shop-production failed at step update_modules: the module installer timed out after 900 seconds \u001b[31mred\u001b[0m';
const LABELS = {
  check: 'failed_runs',
  namespace: 'acme-corporation',
  project: 'webshop-platform',
  environment_type: 'production',
  app: 'shop-production',
} as const;

let state: TempState;
let configFile: string;

beforeEach(() => {
  state = tempState();
  configFile = writeStateCommandConfig(state.dir);
  fireFindings(path.join(state.dir, 'state.db'), 'runs', [
    finding('run/1', { severity: 'critical', summary: LONG_SUMMARY, labels: LABELS }),
    finding('run/2', { summary: 'Short one', labels: { check: 'failed_runs', app: 'blog' } }),
  ]);
});
afterEach(() => state.cleanup());

/** The table's lines (header and alerts), without the count line under it. */
const tableLines = (stdout: string) => stdout.trimEnd().split('\n').slice(0, -1);

describe('alerts table width', () => {
  // 90: the narrowest that holds a row once the summary and labels gave way (the id is never cut).
  it.each([90, 100, 120])('fits a terminal %i columns wide, cutting the summary with …', async (columns) => {
    const { code, stdout } = await runCli(['alerts', '--config', configFile], { columns });
    expect(code).toBe(0);
    const lines = tableLines(stdout);
    expect(lines).toHaveLength(3);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(columns);
    expect(lines[1]).toMatch(/ {2}Update of.*…/);
    expect(lines[2]).toContain('Short one');
    expect(stdout).toMatch(/\n2 open \(2 firing, 0 pending\)\n$/);
  });

  it.each([240, 280])(
    'keeps the summary whole on a wide terminal (%i columns), cutting the labels first',
    async (columns) => {
      const { stdout } = await runCli(['alerts', '--config', configFile], { columns });
      const [header, first] = tableLines(stdout);
      expect(first!.length).toBeLessThanOrEqual(columns);
      const labelsAt = header!.indexOf('LABELS');
      expect(first).toContain('the module installer timed out after 900 seconds \\u{1b}[31mred\\u{1b}[0m  ');
      expect(first!.slice(labelsAt)).toMatch(/^namespace=acme-corporation.*…$/);
    },
  );

  it('cuts the labels too when the summary alone cannot make it fit, down to their header', async () => {
    const { stdout } = await runCli(['alerts', '--config', configFile], { columns: 60 });
    const [header, first] = tableLines(stdout);
    const summaryAt = header!.indexOf('SUMMARY');
    const labelsAt = header!.indexOf('LABELS');
    expect(labelsAt - summaryAt).toBe(10 + 2);
    expect(first!.slice(summaryAt, labelsAt).trimEnd()).toBe('Update of…');
    expect(first!.slice(labelsAt)).toBe('names…');
  });

  it.each([
    ['piped (no terminal)', [], undefined],
    ['with --json, even on a terminal', ['--json'], 80],
  ])('keeps every character %s', async (_how, flags, columns) => {
    const { stdout } = await runCli(['alerts', '--config', configFile, ...flags], columns ? { columns } : {});
    expect(stdout).not.toContain('…');
    const shown = flags.length ? (JSON.parse(stdout) as { summary: string }[])[0]!.summary : stdout;
    expect(shown).toContain('the module installer timed out after 900 seconds');
  });

  it.each([undefined, 80, 140])('never writes a raw escape (columns %s)', async (columns) => {
    const { stdout } = await runCli(['alerts', '--config', configFile], columns ? { columns } : {});
    expect(stdout).not.toContain('\u001b');
  });
});
