/**
 * Keeps score while the demo runs: which staged problem has been announced (firing) and cleared
 * (resolved), what remediation did, how many messages each channel got. It reads the messages as
 * delivered to the stand-ins, so the closing summary reports what people would have seen.
 */
import type { RequestRecord } from '../simulator-core.js';
import type { EmailReading } from './read-email.js';
import type { SlackReading } from './read-slack-payload.js';
import type { DemoProblemKind, ScenarioStep, StagedProblem } from './scenario.js';

/** How one staged problem went. */
export interface ProblemScore {
  problem: StagedProblem;
  /** Its start step has happened (a demo stopped early may not get that far). */
  staged: boolean;
  /** Firing events about it (Slack, which every route reaches). */
  fired: number;
  resolved: number;
  /** Titles of remediation notices about it ("Retried automatically: succeeded"). */
  remediation: string[];
}

/** The demo's score so far. */
export class DemoTally {
  private readonly scores = new Map<DemoProblemKind, ProblemScore>();
  private slackMessages = 0;
  private emailMessages = 0;
  private firing = 0;
  private resolvedCount = 0;
  private readonly notices: string[] = [];
  private readonly changes: RequestRecord[] = [];

  constructor(problems: readonly StagedProblem[]) {
    for (const problem of problems)
      this.scores.set(problem.kind, { problem, staged: false, fired: 0, resolved: 0, remediation: [] });
  }

  /** Records a Slack message; events are matched to staged problems by check and app. */
  slack(reading: SlackReading): void {
    this.slackMessages += 1;
    for (const event of reading.events) {
      if (event.resolved) this.resolvedCount += 1;
      else this.firing += 1;
      for (const score of this.scores.values()) {
        if (score.problem.check !== reading.check || score.problem.app !== event.app) continue;
        if (event.resolved) score.resolved += 1;
        else score.fired += 1;
      }
    }
    if (reading.topic === 'remediation') {
      this.notices.push(reading.title);
      const text = reading.lines.join('\n');
      for (const score of this.scores.values()) {
        if (score.problem.remediated && text.includes(score.problem.app)) score.remediation.push(reading.title);
      }
    }
  }

  /** Records a scenario step that happened: a start step stages its problem and its consequences. */
  step(step: Pick<ScenarioStep, 'problem' | 'phase'>): void {
    if (step.phase !== 'start') return;
    for (const score of this.scores.values()) if (score.problem.stagedBy === step.problem) score.staged = true;
  }

  /** Records an email. */
  email(_reading: EmailReading): void {
    this.emailMessages += 1;
  }

  /** Records a change the service answered (remediation's runs.retry, say). */
  change(request: RequestRecord): void {
    this.changes.push(request);
  }

  /** Each staged problem's score, in staging order. */
  get problems(): ProblemScore[] {
    return [...this.scores.values()];
  }

  /** Messages delivered per channel kind. */
  get delivered(): { slack: number; email: number } {
    return { slack: this.slackMessages, email: this.emailMessages };
  }

  /** Alert events delivered (Slack), firing and resolved. */
  get events(): { firing: number; resolved: number } {
    return { firing: this.firing, resolved: this.resolvedCount };
  }

  /** Remediation notices delivered (their titles) and change requests the service answered. */
  get remediation(): { notices: string[]; changes: RequestRecord[] } {
    return { notices: [...this.notices], changes: [...this.changes] };
  }

  /** True once every staged problem has fired and resolved, and remediation has reported back where expected. */
  complete(): boolean {
    return this.problems.every(
      (s) => s.fired > 0 && s.resolved > 0 && (!s.problem.remediated || s.remediation.length > 0),
    );
  }
}
