/**
 * The PagerDuty channel driven end to end against a fake of the Events API v2 (202, dedup_key
 * semantics): the daemon triggers one PagerDuty alert per alert, keyed by its fingerprint, with
 * its severity, links and context; an acknowledgement here acknowledges it, the end resolves it; a
 * repeat is folded into the open alert; a 429 and a 500 are retried through the outbox, and what
 * PagerDuty accepted before a failure is not sent twice; a 400 is kept with PagerDuty's words; the
 * routing key is never in the state, the log or a reason.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startPagerDutyFake, type PagerDutyFake } from '../helpers/pagerduty-fake.js';
import { HOSTILE_APP, OnCallWorld } from './on-call-fixture.js';

let pd: PagerDutyFake;
let world: OnCallWorld;

beforeEach(async () => {
  pd = await startPagerDutyFake();
  world = await OnCallWorld.start();
});
afterEach(async () => {
  await world.close();
  await pd.close();
});

function open() {
  return world.open(
    `name: oncall
type: pagerduty
routing_key: "\${PD_KEY}"
api_url: ${pd.root}`,
    { PD_KEY: pd.routingKey },
  );
}

describe('the PagerDuty channel, end to end', () => {
  it('triggers with the fingerprint as dedup_key, acknowledges when acknowledged here, resolves when over', async () => {
    open();
    const { urlId } = world.hostileApp();
    const fingerprint = await world.fire(urlId);

    expect(pd.opened).toHaveLength(1);
    const alert = pd.alerts.get(fingerprint)!;
    expect(alert).toMatchObject({ status: 'triggered', severity: 'critical', triggers: 1 });
    const trigger = alert.last;
    expect(trigger).toMatchObject({
      event_action: 'trigger',
      dedup_key: fingerprint,
      client: 'deploy-watchdog',
      client_url: 'https://watchdog.example.com/',
      payload: { class: 'certificates', group: 'production', component: expect.any(String) },
    });
    // API text is data in JSON: kept as it is (hidden characters written out), nothing rendered.
    expect(trigger.payload!.component).toContain('*shop* @everyone');
    expect(trigger.payload!.component).toContain('\\u{202e}');
    expect(trigger.payload!.custom_details).toMatchObject({
      Check: 'certificates',
      Fingerprint: fingerprint,
      Console: `https://watchdog.example.com/alert?fp=${encodeURIComponent(fingerprint)}`,
    });
    expect(trigger.links?.[0]).toEqual({ href: expect.stringContaining('watchdog.example.com'), text: 'Console' });

    await world.acknowledge(fingerprint);
    expect(pd.alerts.get(fingerprint)?.status).toBe('acknowledged');
    expect(pd.events.at(-1)).toEqual({
      routing_key: pd.routingKey,
      event_action: 'acknowledge',
      dedup_key: fingerprint,
    });

    await world.resolve(urlId);
    expect(pd.alerts.get(fingerprint)?.status).toBe('resolved');
    expect(pd.events.map((e) => e.event_action)).toEqual(['trigger', 'acknowledge', 'resolve']);
    expect(pd.ignored).toEqual([]);
    expect(pd.invalid).toEqual([]);
    expect(world.statuses()).not.toContain('pending');
    expect(world.leaks([pd.routingKey])).toEqual([]);
    expect(HOSTILE_APP).toContain('@everyone');
  });

  it.each([
    {
      name: '429',
      answer: {
        status: 429,
        body: { status: 'throttle event', message: 'Requests for this service are arriving too quickly.' },
      },
    },
    { name: '500', answer: { status: 500, body: 'internal error' } },
  ])('retries a $name through the outbox, then triggers once', async ({ answer }) => {
    open();
    const { urlId } = world.hostileApp();
    pd.answerNext(answer);
    world.sim.control.checks.certificates.expire(urlId, { inDays: 2 });
    await world.wd!.runOnce(['urls']);
    expect(await world.wd!.deliverDue()).toMatchObject({ retried: 1 });
    expect(world.statuses()).toContain('pending');
    expect(world.lastError()).toContain(`HTTP ${answer.status}`);
    expect(pd.opened).toHaveLength(0);

    // The channel's backoff (10s, with jitter) passes: the same event goes again, and is taken.
    world.clock.advance(15_000);
    await world.wd!.deliverDue();
    expect(pd.opened).toHaveLength(1);
    expect(pd.opened[0]!.triggers).toBe(1);
    expect(world.statuses()).not.toContain('pending');
    expect(world.leaks([pd.routingKey])).toEqual([]);
  });

  it('sends again only what PagerDuty had not taken when a message of two alerts failed half-way', async () => {
    open();
    const apps = [...world.sim.control.state.apps.values()].filter(
      (a) => a.envType === 'production' && a.deployedAt !== null && a.urlIds.length > 0,
    );
    for (const app of apps.slice(0, 2)) world.sim.control.checks.certificates.expire(app.urlIds[0]!, { inDays: 2 });
    // The first trigger is taken, the second answered 502.
    pd.answerNext({ status: 502, body: 'bad gateway' }, 1, 1);
    await world.wd!.runOnce(['urls']);
    expect(await world.wd!.deliverDue()).toMatchObject({ retried: 1 });
    expect(pd.opened).toHaveLength(1);

    world.clock.advance(15_000);
    await world.wd!.deliverDue();
    expect(pd.opened).toHaveLength(2);
    // Each alert triggered once: the retry did not send the first again.
    expect(pd.opened.map((a) => a.triggers)).toEqual([1, 1]);
    expect(pd.events.filter((e) => e.event_action === 'trigger')).toHaveLength(2);
    expect(world.statuses()).not.toContain('pending');
  });

  it('keeps an event PagerDuty refuses (400) with its words, the routing key it echoed scrubbed', async () => {
    open();
    const { urlId } = world.hostileApp();
    pd.answerNext({
      status: 400,
      body: { status: 'invalid event', message: `Event object is invalid for ${pd.routingKey}`, errors: ['x'] },
    });
    world.sim.control.checks.certificates.expire(urlId, { inDays: 2 });
    await world.wd!.runOnce(['urls']);
    expect(await world.wd!.deliverDue()).toMatchObject({ failed: 1 });
    expect(world.lastError()).toContain('rejected (HTTP 400)');
    expect(world.lastError()).toContain('Event object is invalid for <secret>');
    expect(world.leaks([pd.routingKey])).toEqual([]);
  });

  it('pauses the channel on an unknown routing key: one event a round, not one per message', async () => {
    world.open(
      `name: oncall
type: pagerduty
routing_key: "\${PD_KEY}"
api_url: ${pd.root}`,
      { PD_KEY: 'f'.repeat(32) },
      '{ match: { check: certificates }, channels: [oncall], group_by: [app] }',
    );
    // Two apps' certificates, grouped by app: two messages due in the one round.
    const urlIds = [...world.sim.control.state.apps.values()]
      .filter((a) => a.envType === 'production' && a.urlIds.length > 0)
      .slice(0, 2)
      .map((a) => a.urlIds[0]!);
    for (const id of urlIds) world.sim.control.checks.certificates.expire(id, { inDays: 2 });
    await world.wd!.runOnce(['urls']);
    expect(await world.wd!.deliverDue()).toMatchObject({ failed: 1, waiting: 2 });
    expect(pd.invalid).toEqual([['Invalid routing key']]);
    expect(world.lastError()).toContain('check routing_key of oncall');
    // Paused: the next round asks nothing.
    world.clock.advance(60_000);
    await world.wd!.deliverDue();
    expect(pd.invalid).toHaveLength(1);
  });
});
