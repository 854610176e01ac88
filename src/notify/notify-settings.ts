/**
 * The parts of the parsed config the notification pipeline reads (durations in milliseconds), as
 * the config schema parses them: inferred, never written out again, so the pipeline's types and
 * the file's cannot drift apart.
 */
import type { ParsedConfig } from '../config/config-schema.js';

/** `notify` as its schema parses it. */
type NotifySection = ParsedConfig['notify'];

/** One entry of `notify.routes`: label matchers naming channels, Alertmanager-style. */
export type RouteSettings = NotifySection['routes'][number];

/** One entry of `notify.mute_windows`. */
export type MuteWindowSettings = NotifySection['mute_windows'][number];

/** `notify.delivery`, all in ms. */
export type DeliverySettings = NotifySection['delivery'];

/** `notify.digest`. */
export type DigestSettings = NotifySection['digest'];

/** `notify.heartbeat`: a healthchecks-style ping URL. */
export type HeartbeatSettings = NonNullable<NotifySection['heartbeat']>;

/** `notify.inhibit`: which inhibition rules are on. */
export type InhibitSettings = NotifySection['inhibit'];

/**
 * `notify` as the pipeline reads it (channels are built elsewhere and passed in by name, with the
 * links they show; an alert's context is read elsewhere and handed in, `NotifierOptions.context`).
 */
export type NotifySettings = Omit<NotifySection, 'channels' | 'links' | 'context'>;

/** `notify.links`: the platform's page templates by record type. */
export type PageLinkSettings = NotifySection['links'];

/** `alerts` defaults the routes fall back to. */
export type AlertDefaults = Pick<ParsedConfig['alerts'], 'repeat_interval' | 'send_resolved'>;
