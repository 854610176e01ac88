import { isAcknowledgementKind } from '../../alerts/alert-event.js';
import type { Channel, ChannelKind, Notification, SendResult } from './channel.js';
import { cutSayingHowMuch, SHOWN_LIMITS, silenceCommand } from './describe.js';
import { logConfigSchema, type LogConfig } from './log-config.js';

/** One structured log line: the level, the message and its fields. */
export interface LogLine {
  level: 'info' | 'warn' | 'error';
  msg: string;
  fields: Record<string, unknown>;
}

/** What the log channel renders: one line per event (or one for a notice). */
export type LogMessage = LogLine[];

const LEVEL_BY_SEVERITY = { info: 'info', warning: 'warn', critical: 'error', resolved: 'info', ok: 'info' } as const;

/** Builds the log lines for a notification. Pure. `commandConfigFile`: see `ChannelDeps`. */
export function renderLog(notification: Notification, commandConfigFile?: string): LogMessage {
  if (notification.type === 'notice') {
    return [
      {
        level: LEVEL_BY_SEVERITY[notification.severity ?? 'info'],
        msg: notification.title,
        fields: {
          topic: notification.topic,
          severity: notification.severity,
          fields: Object.fromEntries((notification.fields ?? []).map((f) => [f.label, f.value])),
          lines: notification.lines,
          url: notification.url ?? undefined,
        },
      },
    ];
  }
  const lines: LogLine[] = notification.events.map((e) => ({
    // A resolved alert is good news, whatever severity it had; who has an alert is no alarm.
    level: e.kind === 'resolved' || isAcknowledgementKind(e.kind) ? 'info' : LEVEL_BY_SEVERITY[e.severity],
    // Cut as every channel cuts it: the daemon's own log is no place for a service's megabytes.
    msg: cutSayingHowMuch(e.summary, SHOWN_LIMITS.summary),
    fields: {
      event: e.kind,
      eventId: e.id,
      check: e.check,
      severity: e.severity,
      fingerprint: e.fingerprint,
      labels: e.labels,
      details: e.details,
      url: e.url ?? undefined,
      reason: e.reason,
      // Why a resolved alert is over ("run #5981 succeeded after a retry"), as others say "Why:".
      resolution: e.resolution ? cutSayingHowMuch(e.resolution, SHOWN_LIMITS.factValue) : undefined,
      startsAt: e.startsAt,
      since: e.since ?? undefined,
      endsAt: e.endsAt ?? undefined,
      acknowledgement: e.acknowledgement,
      // How to mute just this alert, as the other channels print it (none once resolved).
      silence: silenceCommand({ ...notification, events: [e], omitted: 0 }, commandConfigFile) ?? undefined,
    },
  }));
  if (notification.omitted > 0) {
    lines.push({
      level: 'info',
      msg: `and ${notification.omitted} more`,
      fields: { group: notification.group, omitted: notification.omitted },
    });
  }
  return lines;
}

/** The log channel kind: writes each event as one structured line through the injected logger. */
export const logChannel = {
  configSchema: logConfigSchema,
  create(config, deps): Channel<LogMessage> {
    const log = deps.logger.child({ channel: config.name });
    return {
      kind: 'log',
      sendTimeoutMs: 0,
      render: (notification) => renderLog(notification, deps.commandConfigFile),
      async send(message: LogMessage): Promise<SendResult> {
        for (const line of message) log[line.level](line.fields, line.msg);
        return { outcome: 'ok' };
      },
    };
  },
} satisfies ChannelKind<LogConfig, LogMessage>;
