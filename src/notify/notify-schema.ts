/**
 * The `notify` section of the config file, as zod parses it: the notification pipeline's own
 * schema, beside the pipeline, so its settings (`notify-settings.ts`) are inferred from it without
 * reaching up to the whole config's schema. Every key but `channels`: `src/config/config-schema.ts`
 * adds that list from the channel kinds (`channels/registry.ts`), so this schema, which the
 * channels' own types reach through the routes and links, never imports the channels.
 */
import { z } from 'zod';
import { contextConfigSchema } from '../config/context-config.js';
import { DURATION_HINT, durationSchema, positiveDurationSchema } from '../config/duration.js';
import { pageTemplateSchema, runbookUrlSchema } from '../config/link-schema.js';
import { labelNameSchema, matchValueSchema, nameSchema, regexSchema } from '../config/schema-blocks.js';
import { secretUrlSchema } from '../config/secret.js';

/** An IANA time zone name that this Node's Intl knows. */
const timeZoneSchema = z
  .string({ error: 'must be an IANA time zone name such as Europe/Paris or UTC' })
  .refine((tz) => {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: tz });
      return true;
    } catch {
      return false;
    }
  }, 'is not a known IANA time zone (examples: UTC, Europe/Paris, America/New_York)');

/** A local time of day, `HH:MM` (24-hour). */
const timeOfDaySchema = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'must be a time of day HH:MM (00:00 to 23:59)');

/** An end time of day: like {@link timeOfDaySchema}, plus `24:00` for "until midnight". */
const endTimeOfDaySchema = z
  .string()
  .regex(/^(([01]\d|2[0-3]):[0-5]\d|24:00)$/, 'must be a time of day HH:MM (00:00 to 24:00)');

const WEEKDAY = '(?:mon|tue|wed|thu|fri|sat|sun|monday|tuesday|wednesday|thursday|friday|saturday|sunday)';
/** A weekday (`mon`, `monday`) or an inclusive range (`mon:fri`). */
const weekdaySchema = z
  .string()
  .transform((s) => s.toLowerCase())
  .pipe(
    z
      .string()
      .regex(
        new RegExp(`^${WEEKDAY}(?::${WEEKDAY})?$`),
        'must be a weekday (mon … sun, or monday … sunday) or a range such as mon:fri',
      ),
  );

/** Alert severities, lowest first. */
const severitySchema = z.enum(['info', 'warning', 'critical']);

/**
 * How often a still-firing alert is re-sent: a duration above 0s (0s would re-send it every cycle),
 * or `off` for never, which parses to Infinity (not null) so the notify stage compares it like any
 * other interval.
 */
export const repeatIntervalSchema = z.union([z.literal('off').transform(() => Infinity), positiveDurationSchema], {
  error: `must be "off" or ${DURATION_HINT}`,
});

/** The channels a route or its escalation tells, by name: at least one. */
const channelNamesSchema = z.array(z.string().min(1)).min(1, 'must name at least one channel');

const routeSchema = z
  .strictObject({
    name: nameSchema.optional(),
    match: z
      .record(labelNameSchema, matchValueSchema)
      .optional()
      .describe('Label equals the value (a list: any of them).'),
    match_re: z
      .record(labelNameSchema, regexSchema)
      .optional()
      .describe('Label matches the anchored regular expression.'),
    min_severity: severitySchema.optional(),
    channels: channelNamesSchema,
    continue: z.boolean().default(false).describe('Keep looking at later routes after this one matched.'),
    repeat_interval: repeatIntervalSchema.optional().describe('Overrides alerts.repeat_interval for this route.'),
    send_resolved: z.boolean().optional(),
    send_acknowledged: z
      .boolean()
      .optional()
      .describe(
        "Tell this route's channels when someone acknowledges an alert or gives it back. Absent: as each channel's kind does (email, Slack webhooks and the log do not; a channel that keeps one message per alert does).",
      ),
    mute_windows: z.array(z.string().min(1)).optional(),
    group_by: z.array(labelNameSchema).optional(),
    escalate_after: durationSchema
      .optional()
      .describe(
        'Escalation: an alert of this route still firing and unacknowledged this long after it fired is sent to escalate_to too, once per firing, naming the channels told before. An acknowledgement (or its end) stops it.',
      ),
    escalate_to: channelNamesSchema
      .optional()
      .describe(
        'The channels an escalation goes to (with escalate_after); they then hear the alert through to its end.',
      ),
    runbook_url: runbookUrlSchema
      .optional()
      .describe(
        "The runbook of this route's alerts (a team's on-call page, say), linked in every message it sends, beside each check's own (checks.<name>.runbook_url).",
      ),
  })
  .refine((r) => (r.escalate_after === undefined) === (r.escalate_to === undefined), {
    path: ['escalate_to'],
    message: 'escalate_after and escalate_to go together: say how long to wait and whom to tell then',
  });

/** `notify.links`: the platform's own pages, by the kind of record an alert is about. */
const linksSchema = z
  .strictObject({
    app: pageTemplateSchema.optional().describe("An app's page, e.g. https://manage.example.com/apps/{id}."),
    run: pageTemplateSchema.optional().describe("A run's page, e.g. https://manage.example.com/runs/{id}."),
    backup: pageTemplateSchema.optional().describe("A backup's page, e.g. https://manage.example.com/backups/{id}."),
  })
  .prefault({})
  .describe(
    "The platform's own pages, linked from each alert about such a record (a button in Slack, a link in email): URL templates with {id}, filled with the record's id, URL-encoded. Absent: no such link.",
  );

const muteWindowSchema = z.strictObject({
  name: nameSchema,
  time_zone: timeZoneSchema.default('UTC'),
  weekdays: z.array(weekdaySchema).min(1, 'must list at least one day (or leave it out for every day)').optional(),
  times: z
    .array(
      z
        .strictObject({ start: timeOfDaySchema, end: endTimeOfDaySchema })
        .refine((t) => t.start !== t.end, { path: ['end'], message: 'must differ from start' }),
    )
    .min(1, 'must list at least one time range'),
});

export const notifySchema = z.strictObject({
  links: linksSchema,
  routes: z
    .array(routeSchema)
    .default([])
    .describe('Ordered; the first match wins unless it says continue. A route without match catches all.'),
  group_by: z.array(labelNameSchema).default(['check', 'environment_type']),
  max_items_per_message: z.number().int().min(1).max(100).default(10),
  mute_windows: z.array(muteWindowSchema).default([]),
  delivery: z
    .strictObject({
      max_age: positiveDurationSchema
        .prefault('24h')
        .describe('A notification not delivered this long after it was due is given up.'),
      initial_backoff: durationSchema.prefault('10s'),
      max_backoff: durationSchema.prefault('10m'),
      timeout: positiveDurationSchema
        .prefault('15s')
        .describe(
          "Time limit of one send; raised per channel to that channel's own limit plus 2s, so a send still under way is never given up and sent twice.",
        ),
      interval: positiveDurationSchema
        .prefault('5s')
        .describe('How often the delivery loop looks for due notifications.'),
    })
    .refine((d) => d.initial_backoff <= d.max_backoff, {
      path: ['initial_backoff'],
      message: 'must not be longer than max_backoff',
    })
    .prefault({}),
  digest: z
    .strictObject({
      enabled: z.boolean().default(false),
      at: timeOfDaySchema.default('09:00'),
      time_zone: timeZoneSchema.default('UTC'),
      channels: z.array(z.string().min(1)).default([]).describe('Channels that get the digest; empty: every channel.'),
    })
    .prefault({}),
  heartbeat: z
    .strictObject({
      url: secretUrlSchema.describe('Ping URL (a healthchecks-style check); a secret.'),
      every: durationSchema.prefault('5m'),
    })
    .optional(),
  context: contextConfigSchema,
  inhibit: z
    .strictObject({
      api_unreadable: z
        .boolean()
        .default(true)
        .describe('While the API cannot be read, hold alerts it would make stale.'),
      bad_servers: z.boolean().default(true).describe('Hold alerts of apps on a server in a bad state.'),
      app_maintenance: z
        .boolean()
        .default(true)
        .describe(
          'Hold the URL and certificate alerts of an app in maintenance or in upgrade standby (seen by the maintenance and upgrades checks): it is out of service on purpose.',
        ),
      app_down: z
        .boolean()
        .default(true)
        .describe(
          'Hold the URL and certificate alerts of an app whose app_state alert fires (stopped, in error): one page, its URL alerts summarised under it.',
        ),
    })
    .prefault({}),
});

/** `notify` as its schema parses it (without `channels`: `Config['notify']` has them). */
export type NotifySection = z.output<typeof notifySchema>;
