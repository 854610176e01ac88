import type { AttentionSection, AttentionSummary } from '../api/schemas.js';
import { getOrAdd } from '../lib/get-or-add.js';
import { unlessAborted } from '../lib/unless-aborted.js';
import type { CollectorContext } from './collector-context.js';
import { readAcrossNamespaces } from './read-across-namespaces.js';
import type { AttentionSnapshot } from './snapshot.js';

const SEVERITY_ORDER: Record<AttentionSection['severity'], number> = { danger: 0, warning: 1, info: 2 };

/**
 * Reads the `attention` job's snapshot: `attention.list`, once, or once per configured namespace
 * with the answers merged (see {@link mergeAttention}), and then what the daemon's other jobs
 * report (`reportedElsewhere`), as late as possible so an alert opened during the read counts.
 *
 * The service lists the first 20 items of a section. Read across every namespace in one call, a
 * section that counts more is read again per namespace (`widen`): each namespace lists its own
 * first 20, so the window grows by as many namespaces as the token reaches.
 */
export async function collectAttention(ctx: CollectorContext): Promise<AttentionSnapshot> {
  let summary = await readMerged(ctx, ctx.namespaces);
  if (ctx.namespaces === null && isCapped(summary)) summary = (await widen(ctx)) ?? summary;
  ctx.logger.debug({ sections: summary.sections.length, total: summary.total }, 'attention read');
  return {
    job: 'attention',
    takenAt: ctx.now,
    summary,
    reported: ctx.reportedElsewhere?.() ?? [],
    ...(ctx.reporting ? { reporting: ctx.reporting } : {}),
  };
}

/** `attention.list` once per namespace of `namespaces` (once without one when null), merged. */
async function readMerged(ctx: CollectorContext, namespaces: readonly string[] | null): Promise<AttentionSummary> {
  const answers = await readAcrossNamespaces({ ...ctx, namespaces }, async (query) => [
    // A section that does not fit is set aside (its rule's alerts held), the others read.
    await ctx.client.attention.list(query, { signal: ctx.signal, quarantine: ctx.quarantine }),
  ]);
  return answers.length === 1 ? answers[0]! : mergeAttention(answers);
}

/** Whether a section lists fewer items than it counts. */
function isCapped(summary: AttentionSummary): boolean {
  return summary.sections.some((s) => s.count > s.items.length);
}

/**
 * The summary read once per namespace the token reaches (the runtime's whoami, not asked again:
 * refused once, it is refused every cycle), merged; undefined when that cannot widen it (fewer than
 * two namespaces, whoami refused, a namespace's read failing): the answer read across them all then
 * stands, as complete as it was.
 */
function widen(ctx: CollectorContext): Promise<AttentionSummary | undefined> {
  const codes = ctx.reached;
  if (!codes || codes.length < 2) return Promise.resolve(undefined);
  return unlessAborted(readMerged(ctx, codes), ctx.signal, (err) => {
    ctx.logger.debug({ err }, 'cannot read attention per namespace; the first 20 of each section stand');
    return undefined;
  });
}

/**
 * Merges per-namespace summaries: sections of the same rule become one (items concatenated,
 * counts added), most severe first as the service orders them, and `total` the sum of the counts.
 */
export function mergeAttention(answers: readonly AttentionSummary[]): AttentionSummary {
  const byRule = new Map<string, AttentionSection>();
  for (const answer of answers) {
    for (const section of answer.sections) {
      const merged = getOrAdd(byRule, section.rule, () => ({ ...section, items: [], count: 0 }));
      merged.items = [...merged.items, ...section.items];
      merged.count += section.count;
    }
  }
  // Stable sort: rules of the same severity keep the order they were first seen in.
  const sections = [...byRule.values()].sort((a, b) => SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity]);
  return { sections, total: sections.reduce((sum, s) => sum + s.count, 0) };
}
