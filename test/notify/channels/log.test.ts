import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../helpers/manual-clock.js';
import { logChannel } from '../../../src/notify/channels/log.js';
import { alertEvent, alerts, captureLogger } from './fixtures.js';

describe('log channel', () => {
  it('writes one structured line per event, at a level that follows severity', async () => {
    const { logger, lines } = captureLogger();
    const channel = logChannel.create({ name: 'audit-log', type: 'log' }, { logger, clock: new ManualClock() });
    const result = await channel.send(
      channel.render(
        alerts(
          [
            alertEvent(),
            alertEvent({ id: 2, severity: 'warning' }),
            alertEvent({ id: 3, kind: 'resolved', endsAt: '2026-11-01T11:00:00Z' }),
          ],
          2,
        ),
      ),
    );
    expect(result).toEqual({ outcome: 'ok' });
    const records = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(records.map((r) => [r.level, r.msg, r.event])).toEqual([
      [50, 'Update of shop (production) failed at step install', 'firing'],
      [40, 'Update of shop (production) failed at step install', 'firing'],
      [30, 'Update of shop (production) failed at step install', 'resolved'],
      [30, 'and 2 more', undefined],
    ]);
    expect(records[0]).toMatchObject({
      channel: 'audit-log',
      check: 'failed_runs',
      severity: 'critical',
      fingerprint: 'failed_runs/run/123',
      labels: { app: 'shop', environment_type: 'production' },
      details: { step: 'install' },
      url: 'https://shop.example.com/',
    });
  });

  it('writes a notice as one line', async () => {
    const { logger, lines } = captureLogger();
    const channel = logChannel.create({ name: 'audit-log', type: 'log' }, { logger, clock: new ManualClock() });
    await channel.send(
      channel.render({
        type: 'notice',
        topic: 'test',
        title: 'Test message',
        severity: 'ok',
        fields: [{ label: 'Channel', value: 'audit-log' }],
      }),
    );
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] as string)).toMatchObject({
      level: 30,
      msg: 'Test message',
      topic: 'test',
      fields: { Channel: 'audit-log' },
    });
  });

  it('gives each firing line the command that mutes just that alert, as the other channels print it; none when resolved', async () => {
    const { logger, lines } = captureLogger();
    const channel = logChannel.create(
      { name: 'console', type: 'log' },
      { logger, clock: new ManualClock(), commandConfigFile: '/srv/dw/config.yaml' },
    );
    await channel.send(
      channel.render(alerts([alertEvent(), alertEvent({ id: 3, kind: 'resolved', endsAt: '2026-11-01T11:00:00Z' })])),
    );
    const records = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(records[0]!.silence).toBe(
      "deploy-watchdog silence --config /srv/dw/config.yaml --match check=failed_runs --match app=shop --for 2h --reason '…'",
    );
    expect(records[1]).not.toHaveProperty('silence');
  });

  it('says why a resolved alert is over, as the "Why:" of the other channels does', async () => {
    const { logger, lines } = captureLogger();
    const channel = logChannel.create({ name: 'console', type: 'log' }, { logger, clock: new ManualClock() });
    const resolved = alertEvent({ id: 3, kind: 'resolved', resolution: 'run #123 succeeded after a retry' });
    await channel.send(channel.render(alerts([alertEvent(), resolved])));
    const records = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(records[1]).toMatchObject({ event: 'resolved', resolution: 'run #123 succeeded after a retry' });
    expect(records[0]).not.toHaveProperty('resolution');
  });
});
