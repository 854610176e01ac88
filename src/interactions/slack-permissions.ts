/**
 * Who may do what from a Slack app channel's buttons (`interactions.allow`): anyone who can click
 * the message, nobody, or the Slack users and the members of the user groups listed. A user
 * group's members are asked of Slack (`usergroups.users.list`) when a click needs them and kept
 * for `usergroup_cache`, so a burst of clicks asks once and a person taken off the group loses the
 * right within minutes. A group that cannot be read allows nobody: the click is refused (saying
 * why) unless the person is listed, or in another group that could be read.
 */
import type { Clock } from '../lib/clock.js';
import { errorText } from '../lib/error-text.js';
import type { SlackAllow, SlackPermission } from '../notify/channels/slack-interactions-config.js';

/** Whether a person may do an action, and on what ground, named. */
export type PermissionDecision =
  | { allowed: true; as: 'anyone' | 'listed' | `member of ${string}` }
  | { allowed: false; reason: 'nobody' | 'not_listed' | 'lookup_failed'; detail: string };

/** What {@link SlackPermissions} works with. */
export interface PermissionDeps {
  allow: Readonly<Record<SlackPermission, SlackAllow>>;
  /** How long a user group's members are kept, in ms. */
  cacheMs: number;
  /** A user group's members, from Slack. */
  members: (usergroup: string) => Promise<string[]>;
  clock: Clock;
}

/** The permissions of one Slack app channel, with its user groups' members kept a while. */
export class SlackPermissions {
  readonly #groups = new Map<string, { members: ReadonlySet<string>; at: number }>();

  constructor(private readonly d: PermissionDeps) {}

  /** Whether `userId` may do `what`. Never throws. */
  async check(what: SlackPermission, userId: string): Promise<PermissionDecision> {
    const allow = this.d.allow[what];
    if (allow === 'anyone') return { allowed: true, as: 'anyone' };
    if (allow === 'nobody') return { allowed: false, reason: 'nobody', detail: `nobody may ${what} (allow.${what})` };
    if (allow.users.includes(userId)) return { allowed: true, as: 'listed' };
    let failed: string | undefined;
    for (const usergroup of allow.usergroups) {
      try {
        if ((await this.#members(usergroup)).has(userId)) return { allowed: true, as: `member of ${usergroup}` };
      } catch (err) {
        // Another group may still allow it; if none does, the refusal says this one could not be read.
        failed ??= errorText(err);
      }
    }
    if (failed !== undefined) return { allowed: false, reason: 'lookup_failed', detail: failed };
    return { allowed: false, reason: 'not_listed', detail: `not among the users and user groups of allow.${what}` };
  }

  async #members(usergroup: string): Promise<ReadonlySet<string>> {
    const now = this.d.clock.now();
    const kept = this.#groups.get(usergroup);
    if (kept && now - kept.at < this.d.cacheMs) return kept.members;
    const members = new Set(await this.d.members(usergroup));
    this.#groups.set(usergroup, { members, at: now });
    return members;
  }
}
