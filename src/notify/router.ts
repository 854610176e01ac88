/**
 * Routing: which channels hear about an alert, and under which route's rules (repeat interval,
 * send_resolved, mute windows, grouping). Routes are tried in order, Alertmanager-style: the first
 * match wins unless it says `continue`; an alert no route matches takes the default route, which
 * names every channel, so a gap in the routes never loses an alert.
 */
import {
  compileMatchers,
  matchersFromConfig,
  atLeast,
  type CompiledMatchers,
  type MatchableLabels,
} from '../alerts/matchers.js';
import type { Severity } from '../lib/alert-vocabulary.js';
import { compileMuteWindows, type MuteWindow } from './mute-windows.js';
import type { AlertDefaults, NotifySettings, RouteSettings } from './notify-settings.js';

/** Group labels when neither the route nor `notify.group_by` says: one message per check and environment. */
export const DEFAULT_GROUP_BY: readonly string[] = ['check', 'environment_type'];

/** A route with every default filled in. */
export interface ResolvedRoute {
  name: string;
  channels: readonly string[];
  repeatIntervalMs: number;
  sendResolved: boolean;
  /**
   * Whether its channels are told of acknowledgements (`send_acknowledged`); undefined: as each
   * channel's kind does by default (`Channel.showsAcknowledgements`).
   */
  sendAcknowledged: boolean | undefined;
  muteWindows: readonly MuteWindow[];
  groupBy: readonly string[];
  /** `escalate_after` / `escalate_to`: whom to tell when nobody took a firing alert in time; undefined: nobody. */
  escalation: Escalation | undefined;
}

/** A route's escalation: after how long unacknowledged, to which channels. */
export interface Escalation {
  afterMs: number;
  to: readonly string[];
}

/** One channel an alert goes to, and the route that sent it there. */
export interface RouteTarget {
  channel: string;
  route: ResolvedRoute;
}

interface CompiledRoute extends ResolvedRoute {
  matches: CompiledMatchers;
  minSeverity: Severity | undefined;
  continue: boolean;
}

/** The compiled, ordered routes. Pure: same labels in, same targets out. */
export class Router {
  private constructor(
    private readonly routes: readonly CompiledRoute[],
    /** Taken when no route matches. */
    readonly defaultRoute: ResolvedRoute,
  ) {}

  /**
   * Compiles `notify.routes`, as the config checked them: its schema refuses a match the matchers
   * cannot take (a label name, a regular expression, an empty list), and `config-references.ts` a
   * route naming a channel or a mute window the config does not define, with its key path.
   */
  static fromSettings(
    settings: Pick<NotifySettings, 'routes' | 'group_by' | 'mute_windows'>,
    alerts: AlertDefaults,
    channelNames: readonly string[],
  ): Router {
    const windows = compileMuteWindows(settings.mute_windows);
    const groupBy = settings.group_by.length > 0 ? settings.group_by : DEFAULT_GROUP_BY;
    const ctx = { windows, groupBy, alerts };
    const routes = settings.routes.map((r, i) => compileRoute(r, i, ctx));
    // A route without matchers, naming every channel, with nothing of its own: the defaults.
    return new Router(routes, resolvedRoute('default', { channels: [...channelNames] }, ctx));
  }

  /**
   * The channels an alert with these labels and severity goes to, each once, with the first route
   * that named it. Routes are tried in order; a match stops the walk unless it has `continue`.
   */
  route(labels: MatchableLabels, severity: Severity): RouteTarget[] {
    const out: RouteTarget[] = [];
    const seen = new Set<string>();
    let matched = false;
    for (const route of this.routes) {
      if (route.minSeverity && !atLeast(severity, route.minSeverity)) continue;
      if (!route.matches(labels)) continue;
      matched = true;
      for (const channel of route.channels) {
        if (seen.has(channel)) continue;
        seen.add(channel);
        out.push({ channel, route });
      }
      if (!route.continue) break;
    }
    if (!matched) for (const channel of this.defaultRoute.channels) out.push({ channel, route: this.defaultRoute });
    return out;
  }

  /** The route of that name (the default route is `default`); undefined when the config lost it. */
  named(name: string): ResolvedRoute | undefined {
    return this.all().find((r) => r.name === name);
  }

  /** Every configured channel, in config order: the default route's, which takes them all. */
  get allChannels(): readonly string[] {
    return this.defaultRoute.channels;
  }

  /** Every route, the default last (for the smallest repeat interval and listings). */
  all(): ResolvedRoute[] {
    return [...this.routes, this.defaultRoute];
  }

  /**
   * The smallest repeat interval of any route: the alert lifecycle emits `repeat` at this pace and
   * each route drops the repeats its own interval does not want yet (see the notification log).
   */
  smallestRepeatIntervalMs(): number {
    return Math.min(...this.all().map((r) => r.repeatIntervalMs));
  }
}

/** A route's name: its own, else `route-N` by its place in `notify.routes` (from 1). */
export function routeName(r: Pick<RouteSettings, 'name'>, index: number): string {
  return r.name ?? `route-${index + 1}`;
}

/** What compiling a route needs besides the route: the mute windows and the defaults. */
interface RouteContext {
  windows: Map<string, MuteWindow>;
  groupBy: readonly string[];
  alerts: AlertDefaults;
}

function compileRoute(r: RouteSettings, index: number, ctx: RouteContext): CompiledRoute {
  const matches = compileMatchers(matchersFromConfig({ match: r.match ?? {}, match_re: r.match_re ?? {} }));
  return { ...resolvedRoute(routeName(r, index), r, ctx), matches, minSeverity: r.min_severity, continue: r.continue };
}

/** A route's settings with every default filled in from `ctx` (the default route gives its channels alone). */
function resolvedRoute(
  name: string,
  r: Partial<RouteSettings> & Pick<RouteSettings, 'channels'>,
  ctx: RouteContext,
): ResolvedRoute {
  return {
    name,
    channels: [...r.channels],
    repeatIntervalMs: r.repeat_interval ?? ctx.alerts.repeat_interval,
    sendResolved: r.send_resolved ?? ctx.alerts.send_resolved,
    sendAcknowledged: r.send_acknowledged,
    // The config refuses a route naming a mute window it does not define (`config-references.ts`).
    muteWindows: (r.mute_windows ?? []).map((w) => ctx.windows.get(w)!),
    groupBy: r.group_by && r.group_by.length > 0 ? r.group_by : ctx.groupBy,
    escalation:
      r.escalate_after !== undefined && r.escalate_to
        ? { afterMs: r.escalate_after, to: [...r.escalate_to] }
        : undefined,
  };
}
