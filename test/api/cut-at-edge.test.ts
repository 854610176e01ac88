/**
 * Long text cut where the answer is read: a run's step and watcher texts and an attention item's
 * top-level text fields keep their first EDGE_TEXT_MAX characters and say how long they were;
 * short text and other fields pass untouched, and an emoji at the cut is not split.
 */
import { describe, expect, it } from 'vitest';
import { cutAtEdge, EDGE_TEXT_MAX } from '../../src/api/cut-at-edge.js';
import { attentionItemSchema, runStepSchema } from '../../src/api/schemas.js';

const MB = 1024 * 1024;

describe('cutAtEdge', () => {
  it.each([
    ['short', 'a reason', 'a reason'],
    ['exactly the maximum', 'r'.repeat(EDGE_TEXT_MAX), 'r'.repeat(EDGE_TEXT_MAX)],
    [
      'one more',
      'r'.repeat(EDGE_TEXT_MAX + 1),
      `${'r'.repeat(EDGE_TEXT_MAX)}… [cut: ${EDGE_TEXT_MAX + 1} characters in all]`,
    ],
  ])('%s', (_what, text, cut) => {
    expect(cutAtEdge(text)).toBe(cut);
  });

  it('never splits a surrogate pair at the cut', () => {
    const text = `${'r'.repeat(EDGE_TEXT_MAX - 1)}😀tail`;
    expect(cutAtEdge(text)).toBe(`${'r'.repeat(EDGE_TEXT_MAX - 1)}… [cut: ${text.length} characters in all]`);
  });
});

describe('at the edge', () => {
  it("cuts a 7 MB step reason when the run's answer is parsed", () => {
    const step = runStepSchema.parse({
      name: 'restart',
      state: 'error',
      started_at: '2026-11-01T10:00:00Z',
      updated_at: '2026-11-01T10:01:00Z',
      reason: `<b>failed</b> ${'r'.repeat(7 * MB)}`,
    });
    expect(step.reason!.length).toBeLessThan(EDGE_TEXT_MAX + 40);
    expect(step.reason).toMatch(new RegExp(`^<b>failed</b> r+… \\[cut: ${14 + 7 * MB} characters in all\\]$`));
  });

  it("cuts an attention item's long text fields and keeps the rest as it is", () => {
    const item = attentionItemSchema.parse({ id: 7, name: 'shop', reason: 'x'.repeat(7 * MB), count: 3 });
    expect(item).toEqual({
      id: 7,
      name: 'shop',
      reason: `${'x'.repeat(EDGE_TEXT_MAX)}… [cut: ${7 * MB} characters in all]`,
      count: 3,
    });
    const small = { id: 8, reason: 'fine' };
    expect(attentionItemSchema.parse(small)).toEqual(small);
  });
});
