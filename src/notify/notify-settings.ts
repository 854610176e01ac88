/**
 * The parts of the parsed config the notification pipeline reads (durations in milliseconds), as
 * its schema (`notify-schema.ts`) parses them: inferred, never written out again, so the
 * pipeline's types and the file's cannot drift apart.
 */
import type { NotifySection } from './notify-schema.js';

/** One entry of `notify.routes`: label matchers naming channels, Alertmanager-style. */
export type RouteSettings = NotifySection['routes'][number];

/** One entry of `notify.mute_windows`. */
export type MuteWindowSettings = NotifySection['mute_windows'][number];

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

/**
 * `alerts` defaults the routes fall back to, typed as a route's own keys are parsed:
 * `repeat_interval` in ms (Infinity: `off`), `send_resolved`.
 */
export type AlertDefaults = Required<Pick<RouteSettings, 'repeat_interval' | 'send_resolved'>>;
