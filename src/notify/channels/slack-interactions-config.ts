import { z } from 'zod';
import { durationSchema } from '../../config/duration.js';
import { secretSchema } from '../../config/secret.js';

const userIdSchema = z
  .string()
  .regex(
    /^[UW][A-Z0-9]{2,}$/,
    'must be a Slack user ID like U0123ABCD (in Slack: the profile, ⋮, Copy member ID), not a name',
  );

const usergroupIdSchema = z
  .string()
  .regex(/^S[A-Z0-9]{2,}$/, 'must be a Slack user group ID like S0123ABCD (in Slack: the group, Copy group ID)');

/**
 * Who may do one action: `anyone` who can click the message (the members of its channel),
 * `nobody`, or the Slack users and the members of the user groups listed (IDs, not names: a
 * name can be changed by its owner, an ID cannot).
 */
const allowSchema = z.union(
  [
    z.enum(['anyone', 'nobody']),
    z.strictObject({
      users: z.array(userIdSchema).default([]),
      usergroups: z.array(usergroupIdSchema).default([]),
    }),
  ],
  { error: 'must be anyone, nobody, or { users: [U…], usergroups: [S…] }' },
);

/** Who may do one action, parsed. */
export type SlackAllow = z.output<typeof allowSchema>;

/**
 * A bot, user or legacy token: never what Socket Mode or the signing check take. (Only what a
 * value must not be is checked: `validate` checks a `${VAR}` that is not set with a stand-in.)
 */
const SLACK_TOKEN = /^xox[abpe]-/;

const commonFields = {
  /**
   * Who may do what. The defaults: anyone in the channel may acknowledge (it hides nothing from
   * anyone, shows who took it, ends by itself on an escalation, and anyone may give it back);
   * nobody may silence (it hides alerts from everyone) or remediate (it changes the platform)
   * until the config names who may.
   */
  allow: z
    .strictObject({
      acknowledge: allowSchema
        .default('anyone')
        .describe('Acknowledge and Unacknowledge. Default anyone who can click the message.'),
      silence: allowSchema.default('nobody').describe('Silence 1h and Silence 4h. Default nobody.'),
      remediate: allowSchema
        .default('nobody')
        .describe("Retry now (a remediation policy's action, on request). Default nobody."),
    })
    .prefault({}),
  usergroup_cache: durationSchema
    .prefault('5m')
    .describe('How long the members of a user group (usergroups.users.list) are kept before they are asked again.'),
};

/**
 * How a Slack app channel receives its buttons' clicks: over Socket Mode (an app-level token,
 * `xapp-…`, with `connections:write`: the daemon connects out to Slack, no public address needed),
 * or over HTTP on `server.listen` at `/slack/interactions` (Slack's signing secret checks every
 * request: the address must be reachable from Slack, through a reverse proxy say). Absent: the
 * living message has no action buttons (its link buttons stay).
 */
export const slackInteractionsSchema = z.discriminatedUnion(
  'mode',
  [
    z.strictObject({
      mode: z.literal('socket'),
      app_token: secretSchema
        .refine((s) => !SLACK_TOKEN.test(s.reveal()), 'must be an app-level token (xapp-…), not a bot or user token')
        .describe('The app-level token (xapp-…, use ${VAR}), with the connections:write scope.'),
      ...commonFields,
    }),
    z.strictObject({
      mode: z.literal('http'),
      signing_secret: secretSchema
        .refine(
          (s) => !SLACK_TOKEN.test(s.reveal()) && !s.reveal().startsWith('xapp-'),
          'must be the signing secret (Basic Information, App Credentials), not a token',
        )
        .describe("The app's signing secret (use ${VAR}): Basic Information, App Credentials."),
      ...commonFields,
    }),
  ],
  { error: 'mode must be socket or http' },
);

/** A parsed `interactions` section of a Slack app channel (its token or secret as a Secret). */
export type SlackInteractionsConfig = z.output<typeof slackInteractionsSchema>;

/** What a person may do from a living message's buttons, each allowed apart: the keys of `allow`. */
export type SlackPermission = keyof SlackInteractionsConfig['allow'];
