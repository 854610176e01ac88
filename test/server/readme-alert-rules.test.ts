/**
 * The alert rules the README gives (Operations), run by Prometheus' own `promtool test rules` on
 * series such as the daemon exports: each fires when it should, and not before.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../app/fixtures.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** The README's rules: the indented yaml block that starts with the first alert, dedented. */
function readmeRules(): string {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const m = /\n {2}```yaml\n( {2}- alert: DeployWatchdogSourceStale[\s\S]*?)\n {2}```/.exec(readme);
  if (!m) throw new Error('README.md has no rule block starting with DeployWatchdogSourceStale');
  return m[1]!.replace(/^ {2}/gm, '');
}

/** Each rule's case: an hour and a half of series a minute apart, and what fires when. */
const TESTS = `evaluation_interval: 1m
rule_files: [rules.yml]
tests:
  - interval: 1m
    input_series:
      - { series: 'deploy_watchdog_last_success_timestamp_seconds{source="runs"}', values: '0x90' }
      - { series: 'deploy_watchdog_config_last_reload_successful', values: '1x10 0x80' }
      - { series: 'deploy_watchdog_outbox_waiting{channel="ops"}', values: '0x10 3x80' }
      # A channel that empties its outbox now and then (at 20m and 36m): it delivers, though never idle.
      - { series: 'deploy_watchdog_outbox_waiting{channel="mail"}', values: '2x19 0 2x15 0 2x54' }
    alert_rule_test:
      - { eval_time: 59m, alertname: DeployWatchdogSourceStale, exp_alerts: [] }
      - eval_time: 61m
        alertname: DeployWatchdogSourceStale
        exp_alerts:
          - exp_labels: { severity: warning, source: runs }
            exp_annotations: { summary: deploy-watchdog has not read runs for an hour }
      - { eval_time: 14m, alertname: DeployWatchdogConfigRefused, exp_alerts: [] }
      - eval_time: 16m
        alertname: DeployWatchdogConfigRefused
        exp_alerts:
          - exp_labels: { severity: warning }
            exp_annotations: { summary: deploy-watchdog refused its new config and runs on the old one (see its log) }
      - { eval_time: 30m, alertname: DeployWatchdogCannotDeliver, exp_alerts: [] }
      - eval_time: 41m
        alertname: DeployWatchdogCannotDeliver
        exp_alerts:
          - exp_labels: { severity: critical, channel: ops }
            exp_annotations: { summary: "deploy-watchdog's messages to ops have waited 30 minutes: down or too slow" }
`;

describe("the README's alert rules", () => {
  it('fire, each when it should, under promtool test rules', () => {
    const tmp = tempDir();
    try {
      const group = `groups:\n  - name: deploy-watchdog\n    rules:\n${readmeRules().replace(/^/gm, '      ')}\n`;
      fs.writeFileSync(path.join(tmp.dir, 'rules.yml'), group);
      fs.writeFileSync(path.join(tmp.dir, 'tests.yml'), TESTS);
      const run = spawnSync('promtool', ['test', 'rules', 'tests.yml'], { cwd: tmp.dir, encoding: 'utf8' });
      expect(run.error, 'promtool must be installed (.ci/run installs it)').toBeUndefined();
      expect({ code: run.status, output: `${run.stdout}${run.stderr}` }).toEqual({
        code: 0,
        output: expect.stringContaining('SUCCESS'),
      });
    } finally {
      tmp.cleanup();
    }
  });
});
