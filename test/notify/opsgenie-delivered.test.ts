/**
 * The Opsgenie channel driven end to end against a fake of the Alert API (GenieKey, 202 with a
 * requestId, alias semantics): the daemon creates one Opsgenie alert per alert, its fingerprint the
 * alias, with its priority and details; an acknowledgement here acknowledges it by name, the end
 * closes it; a 429 and a 503 are retried through the outbox; the EU endpoint is the region's; the
 * API key is never in the state, the log or a reason.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { channelConfigSchema } from '../../src/notify/channels/registry.js';
import { OPSGENIE_REGIONS } from '../../src/notify/channels/opsgenie-config.js';
import { startOpsgenieFake, type OpsgenieFake } from '../helpers/opsgenie-fake.js';
import { OnCallWorld } from './on-call-fixture.js';

let og: OpsgenieFake;
let world: OnCallWorld;

beforeEach(async () => {
  og = await startOpsgenieFake();
  world = await OnCallWorld.start();
});
afterEach(async () => {
  await world.close();
  await og.close();
});

function open() {
  return world.open(
    `name: oncall
type: opsgenie
api_key: "\${OG_KEY}"
api_url: ${og.root}
tags: [deploy-watchdog]`,
    { OG_KEY: og.apiKey },
  );
}

describe('the Opsgenie channel, end to end', () => {
  it('creates with the fingerprint as alias, acknowledges by name when acknowledged here, closes when over', async () => {
    open();
    const { urlId } = world.hostileApp();
    const fingerprint = await world.fire(urlId);

    expect(og.opened).toHaveLength(1);
    const alert = og.alerts.get(fingerprint)!;
    expect(alert).toMatchObject({ status: 'open', priority: 'P1', count: 1, tags: ['deploy-watchdog'] });
    expect(alert.message.length).toBeLessThanOrEqual(130);
    expect(alert.details).toMatchObject({ Check: 'certificates', Fingerprint: fingerprint });
    expect(alert.details['Label app']).toContain('*shop* @everyone');
    expect(alert.description).toContain('Console: https://watchdog.example.com/alert?fp=');
    expect(og.requests[0]!.headers.authorization).toBe(`GenieKey ${og.apiKey}`);

    await world.acknowledge(fingerprint);
    expect(og.alerts.get(fingerprint)).toMatchObject({ acknowledged: true, owner: 'alice' });
    expect(og.alerts.get(fingerprint)!.notes.at(-1)).toBe(
      'Acknowledged in deploy-watchdog (cli): rolling back *now* @here',
    );
    expect(og.requests.at(-1)!.url).toBe(
      `/v2/alerts/${encodeURIComponent(fingerprint)}/acknowledge?identifierType=alias`,
    );

    await world.resolve(urlId);
    expect(og.alerts.get(fingerprint)?.status).toBe('closed');
    expect(og.failedRequests).toEqual([]);
    expect(og.invalid).toEqual([]);
    expect(world.statuses()).not.toContain('pending');
    expect(world.leaks([og.apiKey])).toEqual([]);
  });

  it.each([
    {
      name: '429',
      answer: { status: 429, headers: { 'retry-after': '30' }, body: { message: 'Too many requests' } },
      wait: 30_000,
    },
    { name: '503', answer: { status: 503, body: { message: 'Service unavailable' } }, wait: 15_000 },
  ])('retries a $name through the outbox, then creates once', async ({ answer, wait }) => {
    open();
    const { urlId } = world.hostileApp();
    og.answerNext(answer);
    world.sim.control.checks.certificates.expire(urlId, { inDays: 2 });
    await world.wd!.runOnce(['urls']);
    expect(await world.wd!.deliverDue()).toMatchObject({ retried: 1 });
    expect(world.lastError()).toContain(`HTTP ${answer.status}`);
    expect(og.opened).toHaveLength(0);

    world.clock.advance(wait);
    await world.wd!.deliverDue();
    expect(og.opened).toHaveLength(1);
    expect(og.opened[0]!.count).toBe(1);
    expect(world.statuses()).not.toContain('pending');
    expect(world.leaks([og.apiKey])).toEqual([]);
  });

  it('says the API key is refused (401) without it', async () => {
    world.open(`name: oncall\ntype: opsgenie\napi_key: "\${OG_KEY}"\napi_url: ${og.root}`, {
      OG_KEY: 'not-the-key-at-all',
    });
    const { urlId } = world.hostileApp();
    world.sim.control.checks.certificates.expire(urlId, { inDays: 2 });
    await world.wd!.runOnce(['urls']);
    expect(await world.wd!.deliverDue()).toMatchObject({ failed: 1 });
    expect(world.lastError()).toContain('rejected (HTTP 401)');
    expect(world.leaks(['not-the-key-at-all'])).toEqual([]);
  });

  it.each([
    ['us', OPSGENIE_REGIONS.us],
    ['eu', 'https://api.eu.opsgenie.com'],
  ] as const)('offers the %s endpoint', (region, root) => {
    const parsed = channelConfigSchema.parse({ name: 'og', type: 'opsgenie', api_key: 'abcdef12-3456', region });
    expect(parsed.type === 'opsgenie' && OPSGENIE_REGIONS[parsed.region]).toBe(root);
  });
});
