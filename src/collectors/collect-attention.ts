import type { AttentionSection, AttentionSummary } from '../api/schemas.js';
import type { CollectorContext } from './collector-context.js';
import { readAcrossNamespaces } from './read-across-namespaces.js';
import type { AttentionSnapshot } from './snapshot.js';

const SEVERITY_ORDER: Record<AttentionSection['severity'], number> = { danger: 0, warning: 1, info: 2 };

/**
 * Reads the `attention` job's snapshot: `attention.list`, once, or once per configured namespace
 * with the answers merged (see {@link mergeAttention}), and then what the daemon's other jobs
 * report (`reportedElsewhere`), as late as possible so an alert opened during the read counts.
 */
export async function collectAttention(ctx: CollectorContext): Promise<AttentionSnapshot> {
  const answers = await readAcrossNamespaces(ctx, async (namespace) => [
    await ctx.client.attention.list(namespace === undefined ? {} : { namespace }, { signal: ctx.signal }),
  ]);
  const summary = answers.length === 1 ? answers[0]! : mergeAttention(answers);
  ctx.logger.debug({ sections: summary.sections.length, total: summary.total }, 'attention read');
  return { job: 'attention', takenAt: ctx.now, summary, reported: ctx.reportedElsewhere?.() ?? [] };
}

/**
 * Merges per-namespace summaries: sections of the same rule become one (items concatenated,
 * counts added), most severe first as the service orders them, and `total` the sum of the counts.
 */
export function mergeAttention(answers: readonly AttentionSummary[]): AttentionSummary {
  const byRule = new Map<string, AttentionSection>();
  for (const answer of answers) {
    for (const section of answer.sections) {
      const seen = byRule.get(section.rule);
      if (seen) {
        seen.items = [...seen.items, ...section.items];
        seen.count += section.count;
      } else {
        byRule.set(section.rule, { ...section, items: [...section.items] });
      }
    }
  }
  // Stable sort: rules of the same severity keep the order they were first seen in.
  const sections = [...byRule.values()].sort((a, b) => SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity]);
  return { sections, total: sections.reduce((sum, s) => sum + s.count, 0) };
}
