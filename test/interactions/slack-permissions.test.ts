import { describe, expect, it } from 'vitest';
import { SlackPermissions } from '../../src/interactions/slack-permissions.js';
import { ManualClock } from '../helpers/manual-clock.js';
import type { SlackAllow } from '../../src/notify/channels/slack-interactions-config.js';

const GROUPS: Record<string, string[]> = { S0ONCALL: ['U0BOB'], S0LEADS: ['U0CAROL'] };

function permissions(
  allow: Partial<Record<'acknowledge' | 'silence' | 'remediate', SlackAllow>>,
  clock = new ManualClock(),
) {
  const asked: string[] = [];
  const p = new SlackPermissions({
    allow: { acknowledge: 'anyone', silence: 'nobody', remediate: 'nobody', ...allow },
    cacheMs: 5 * 60_000,
    members: async (usergroup) => {
      asked.push(usergroup);
      const members = GROUPS[usergroup];
      if (!members) throw new Error(`usergroups.users.list for ${usergroup} failed: no_such_subteam`);
      return members;
    },
    clock,
  });
  return { p, asked, clock };
}

const listed = { users: ['U0ALICE'], usergroups: ['S0ONCALL', 'S0LEADS'] };

describe('SlackPermissions', () => {
  it.each([
    ['anyone', 'anyone', 'U0MALLORY', { allowed: true, as: 'anyone' }],
    ['nobody', 'nobody', 'U0ALICE', { allowed: false, reason: 'nobody' }],
    ['a listed user', listed, 'U0ALICE', { allowed: true, as: 'listed' }],
    ['a member of the first group', listed, 'U0BOB', { allowed: true, as: 'member of S0ONCALL' }],
    ['a member of the second group', listed, 'U0CAROL', { allowed: true, as: 'member of S0LEADS' }],
    ['someone else', listed, 'U0MALLORY', { allowed: false, reason: 'not_listed' }],
    ['no one listed', { users: [], usergroups: [] }, 'U0ALICE', { allowed: false, reason: 'not_listed' }],
  ] as const)('%s', async (_what, allow, user, expected) => {
    const { p } = permissions({ silence: allow as SlackAllow });
    expect(await p.check('silence', user)).toMatchObject(expected);
  });

  it("keeps a group's members for usergroup_cache, then asks again", async () => {
    const { p, asked, clock } = permissions({ remediate: { users: [], usergroups: ['S0ONCALL'] } });
    await p.check('remediate', 'U0BOB');
    clock.advance(4 * 60_000);
    await p.check('remediate', 'U0MALLORY');
    expect(asked).toEqual(['S0ONCALL']);
    clock.advance(60_000);
    await p.check('remediate', 'U0BOB');
    expect(asked).toEqual(['S0ONCALL', 'S0ONCALL']);
  });

  it('a group that cannot be read allows nobody: refused, saying why, unless another group allows it', async () => {
    const { p } = permissions({ silence: { users: [], usergroups: ['S0GONE', 'S0ONCALL'] } });
    expect(await p.check('silence', 'U0MALLORY')).toEqual({
      allowed: false,
      reason: 'lookup_failed',
      detail: 'usergroups.users.list for S0GONE failed: no_such_subteam',
    });
    expect(await p.check('silence', 'U0BOB')).toEqual({ allowed: true, as: 'member of S0ONCALL' });
  });
});
