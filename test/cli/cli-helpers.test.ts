import { describe, expect, it } from 'vitest';
import { iso, table } from '../../src/cli/cli-helpers.js';

describe('listing helpers', () => {
  it.each([
    [Date.UTC(2026, 10, 1, 12, 0, 0), '2026-11-01T12:00:00Z'],
    [Date.UTC(2026, 10, 1, 12, 0, 0, 250), '2026-11-01T12:00:00.250Z'],
  ])('iso(%d) → %s', (ms, text) => {
    expect(iso(ms)).toBe(text);
  });

  it('aligns columns two spaces apart and leaves the last one unpadded', () => {
    expect(table([['ID', 'STATE', 'REASON'], ['a1', 'active', 'deploy'], ['b', 'expired', 'x']])).toBe(
      ['ID  STATE    REASON', 'a1  active   deploy', 'b   expired  x', ''].join('\n'),
    );
  });
});
