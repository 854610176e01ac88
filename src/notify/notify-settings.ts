/**
 * The parts of the parsed config the notification pipeline reads, as plain data (durations in
 * milliseconds). Declared here, structurally, so the pipeline depends on the shape it needs and not
 * on the whole config: `config.notify` and `config.alerts` fit these types as they are.
 */
import type { Secret } from '../config/secret.js';
import type { Severity } from '../lib/alert-vocabulary.js';

/** One entry of `notify.routes`: label matchers naming channels, Alertmanager-style. */
export interface RouteSettings {
  /** Shown in logs and the outbox audit; `route-N` (1-based) when absent. */
  name?: string;
  /** Label equals the value (a list: any of them). */
  match?: Readonly<Record<string, string | readonly string[]>>;
  /** Label matches the anchored regular expression. */
  match_re?: Readonly<Record<string, string>>;
  /** Only alerts of this severity or worse. */
  min_severity?: Severity;
  channels: readonly string[];
  /** Keep looking at later routes after this one matched. */
  continue?: boolean;
  /** Overrides `alerts.repeat_interval` for this route's channels (ms). */
  repeat_interval?: number;
  /** Overrides `alerts.send_resolved` for this route's channels. */
  send_resolved?: boolean;
  /** Names of `notify.mute_windows` during which this route's notifications are held. */
  mute_windows?: readonly string[];
  /** Overrides `notify.group_by` for this route. */
  group_by?: readonly string[];
}

/** One entry of `notify.mute_windows`. */
export interface MuteWindowSettings {
  name: string;
  /** IANA time zone, e.g. `Europe/Berlin`. */
  time_zone: string;
  /** Days the window starts on: `monday`, `mon`, ranges `monday:friday`. Absent: every day. */
  weekdays?: readonly string[];
  /** Local time ranges `HH:MM`; an end before the start crosses midnight. */
  times: readonly { start: string; end: string }[];
}

/** `notify.delivery`, all in ms. */
export interface DeliverySettings {
  /** A notification not delivered this long after it became due is given up (expired). */
  max_age: number;
  initial_backoff: number;
  max_backoff: number;
  /** Time limit of one send; raised per channel to its own limit (see `sendLimitMs`). */
  timeout: number;
  /** How often the delivery loop looks for due notifications. */
  interval: number;
}

/** `notify.digest`. */
export interface DigestSettings {
  enabled: boolean;
  /** Local time `HH:MM`. */
  at: string;
  time_zone: string;
  /** Channels that get the digest; empty: every channel. */
  channels: readonly string[];
}

/** `notify.heartbeat`: a healthchecks-style ping URL. */
export interface HeartbeatSettings {
  url: Secret;
  /** At most one ping per this many ms. */
  every: number;
}

/** `notify.inhibit`: which inhibition rules are on. */
export interface InhibitSettings {
  api_unreadable: boolean;
  bad_servers: boolean;
}

/** `notify` as the pipeline reads it (channels are built elsewhere and passed in by name). */
export interface NotifySettings {
  routes: readonly RouteSettings[];
  group_by: readonly string[];
  max_items_per_message: number;
  mute_windows: readonly MuteWindowSettings[];
  delivery: DeliverySettings;
  digest: DigestSettings;
  heartbeat?: HeartbeatSettings | undefined;
  inhibit: InhibitSettings;
}

/** `alerts` defaults the routes fall back to. */
export interface AlertDefaults {
  /** ms; Infinity: never repeat. */
  repeat_interval: number;
  send_resolved: boolean;
}
