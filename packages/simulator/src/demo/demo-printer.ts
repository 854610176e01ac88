/**
 * How the demo writes to the terminal: a banner, each scenario step and each delivered message as
 * it happens (stamped with the time since start), and the closing summary. Plain text with emoji,
 * no colour codes, so the output reads the same in a terminal, a CI log and a test's capture.
 */
import type { Writable } from 'node:stream';
import type { DemoTally } from './demo-tally.js';
import type { ScenarioStep } from './scenario.js';

/** What the banner shows. */
export interface DemoBanner {
  apps: number;
  seed: number;
  durationMs: number;
  simulatorUrl: string;
  /** Host and port of the Slack stand-in (its path is secret-looking and stays unprinted). */
  slackAddress: string;
  smtpAddress: string;
  configPath: string;
  keep: boolean;
  jobEverySeconds: number;
  /** Problems the seed came with that were fixed before the start. */
  healed: number;
  /** Problems still open at the start (normally 0). */
  unhealed: string[];
}

/** Writes the demo's output to one stream. */
export class DemoPrinter {
  constructor(
    private readonly out: Writable,
    private readonly labels: { slack: string; email: string },
    private readonly options: { quiet: boolean; startedAt: () => number; now: () => number },
  ) {}

  /** What runs where, before the show. */
  banner(b: DemoBanner): void {
    const lines = [
      `deploy-watchdog demo: ${b.apps} apps (seed ${b.seed}), about ${seconds(b.durationMs)}`,
      '',
      `  simulated service  ${b.simulatorUrl}  (${b.healed} problem${b.healed === 1 ? '' : 's'} from the seed fixed, so the show starts all green)`,
      `  Slack stand-in     ${b.slackAddress}  → printed as ${this.labels.slack}`,
      `  SMTP sink          ${b.smtpAddress}  → printed as ${this.labels.email}`,
      `  config             ${b.configPath}${b.keep ? '' : '  (removed at the end; --keep keeps it)'}`,
      `  every job runs every ${b.jobEverySeconds} s; production alerts go to Slack and email, the rest to Slack`,
      ...b.unhealed.map((p) => `  still open at start: ${p}`),
      '',
      'Ctrl-C stops the demo.',
      '',
    ];
    this.write(lines);
  }

  /** A line of the demo's own, stamped. */
  note(text: string): void {
    this.write([`${this.stamp()}  ${text}`]);
  }

  /** A scenario step, stamped: ⚡ a problem starts, 🔧 it is fixed. */
  step(step: ScenarioStep): void {
    this.write([`${this.stamp()}  ${step.phase === 'start' ? '⚡' : '🔧'} ${step.says}`]);
  }

  /** A delivered message: its label and first line, then the rest indented (unless quiet). */
  message(label: string, lines: readonly string[]): void {
    const [first = '', ...rest] = lines;
    const out = [`${this.stamp()}  ${label} ${first}`];
    if (!this.options.quiet) for (const l of rest) out.push(l === '' ? '' : `          ${l}`);
    this.write(out);
  }

  /** The closing summary: each staged problem's score, deliveries, events, remediation. */
  summary(tally: DemoTally, ending: string): void {
    const problems = tally.problems;
    const told = problems.filter((p) => p.fired > 0 && p.resolved > 0).length;
    const width = Math.max(...problems.map((p) => p.problem.label.length));
    const appWidth = Math.max(...problems.map((p) => p.problem.app.length));
    const lines = ['', `Summary (${ending}, ${seconds(this.options.now() - this.options.startedAt())})`];
    const staged = problems.filter((p) => p.staged).length;
    const of = staged === problems.length ? `${staged}` : `${staged} of ${problems.length}`;
    lines.push(`  ${of} problems staged, ${told} announced and cleared:`);
    for (const p of problems) {
      const ok = p.fired > 0 && p.resolved > 0 && (!p.problem.remediated || p.remediation.length > 0);
      const parts = [`fired ${p.fired > 0 ? '✓' : '✗'}`, `resolved ${p.resolved > 0 ? '✓' : '✗'}`];
      if (p.problem.remediated) parts.push(`remediation: ${p.remediation[0] ?? 'none reported'}`);
      if (!p.staged) parts.splice(0, parts.length, 'not staged: the demo stopped before');
      lines.push(
        `    ${ok ? '✓' : p.staged ? '✗' : '·'} ${p.problem.label.padEnd(width)}  ${p.problem.app.padEnd(appWidth)}  ${parts.join(', ')}`,
      );
    }
    const { slack, email } = tally.delivered;
    const { firing, resolved } = tally.events;
    const { notices, changes } = tally.remediation;
    lines.push(`  notifications delivered: ${slack} to ${this.labels.slack}, ${email} to ${this.labels.email}`);
    lines.push(`  alert events in them: ${firing} firing, ${resolved} resolved`);
    const changeText = changes.map((c) => `${c.fn} ${c.path} → ${c.status}`).join('; ') || 'none';
    lines.push(
      `  remediation: ${changes.length} change${changes.length === 1 ? '' : 's'} made (${changeText}); ${notices.length} notice${notices.length === 1 ? '' : 's'}`,
    );
    lines.push('');
    this.write(lines);
  }

  private stamp(): string {
    const s = (this.options.now() - this.options.startedAt()) / 1000;
    return `+${s.toFixed(1)}s`.padStart(7);
  }

  private write(lines: string[]): void {
    this.out.write(`${lines.join('\n')}\n`);
  }
}

/** "60 s", "2 min 30 s". */
function seconds(ms: number): string {
  const total = Math.round(ms / 1000);
  if (total < 120) return `${total} s`;
  const m = Math.floor(total / 60);
  const s = total % 60;
  return s === 0 ? `${m} min` : `${m} min ${s} s`;
}
