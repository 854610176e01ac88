/**
 * The way back from a PagerDuty incident that groups several of our alerts (Alert Grouping): with
 * the channel's `webhook.api_key`, the daemon answers the webhook, reads the incident's alerts from
 * PagerDuty's REST API (the protocol-level fake: its key check, its pages) and acknowledges (or
 * gives back) each of ours, once, another tool's let be. When the read fails (a wrong key, a 500,
 * no answer) or without the key, the one alert the incident is named after, as before, said once.
 * The REST key is never in the log or the state.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { alertStoreOf, eventsOfAlert } from '../../src/alerts/alert-store.js';
import { MINUTE } from '../app/fixtures.js';
import { freePort } from '../console/console-fixture.js';
import type { FakeAnswer } from '../helpers/fake-service.js';
import { startPagerDutyFake, type PagerDutyFake } from '../helpers/pagerduty-fake.js';
import { OnCallWorld } from '../notify/on-call-fixture.js';

const PD_SECRET = 'pd-SECRET-webhook-signing-0123456789';
const WRONG_KEY = 'wrong-SECRET-rest-key-0123';
const HOUR = 60 * MINUTE;

let world: OnCallWorld;
let pd: PagerDutyFake;
let port: number;

beforeEach(async () => {
  world = await OnCallWorld.start();
  pd = await startPagerDutyFake();
  port = await freePort();
});
afterEach(async () => {
  await world.close();
  await pd.close();
});

/** Starts the daemon with a PagerDuty channel whose webhook has `extra` (YAML) besides its secret. */
async function daemon(extra: string, env: Record<string, string> = {}, channelExtra = ''): Promise<void> {
  world.open(
    `name: oncall
type: pagerduty
routing_key: "\${PD_KEY}"
api_url: ${pd.root}${channelExtra}
webhook: { signing_secret: "\${PD_WEBHOOK_SECRET}"${extra} }`,
    { PD_KEY: pd.routingKey, PD_WEBHOOK_SECRET: PD_SECRET, ...env },
    undefined,
    {
      server: `{ listen: "127.0.0.1:${port}", console: { public_url: "https://watchdog.example.com" } }`,
      jobs: 'jobs: { runs: "off", attention: "off", urls: "0 0 1 1 *", backups: "off", maintenance: "off", servers: "off", installers: "off", jitter: 0s }',
    },
  );
  await world.wd!.start();
}
const withKey = (key = pd.apiKey) => daemon(`, api_key: "\${PD_API_KEY}", api_url: ${pd.root}`, { PD_API_KEY: key });
const to = () => ({ url: `http://127.0.0.1:${port}/pagerduty/oncall`, secret: PD_SECRET });

/** Three certificates expire: three of our alerts fire, each its own PagerDuty alert. Their fingerprints. */
async function fireThree(): Promise<string[]> {
  const urls = [...world.sim.control.state.urls].filter(([, u]) => u.sslExpiresAt !== null).slice(0, 3);
  expect(urls).toHaveLength(3);
  for (const [id] of urls) world.sim.control.checks.certificates.expire(id, { inDays: 2 });
  expect((await world.wd!.runOnce(['urls'])).complete).toBe(true);
  await world.wd!.deliverDue();
  const fingerprints = (
    world
      .wd!.store.db.prepare(`SELECT fingerprint FROM alerts WHERE status = 'firing' AND check_name = 'certificates'`)
      .all() as { fingerprint: string }[]
  ).map((r) => r.fingerprint);
  expect(fingerprints).toHaveLength(3);
  for (const fp of fingerprints) expect(pd.alerts.get(fp)?.status).toBe('triggered');
  return fingerprints;
}

const acknowledgedBy = (fp: string) => alertStoreOf(world.wd!.store).get(fp)?.acknowledgement?.by ?? null;
const kinds = (fp: string) => eventsOfAlert(world.wd!.store, fp).map((e) => e.kind);
const restReads = () => pd.requests.filter((r) => r.method === 'GET');
const lines = (text: string) =>
  world.logs
    .text()
    .split('\n')
    .filter((l) => l.includes(text));
/** Waits for the webhook's work done after its answer: the log line that ends it. */
const settled = (text: string, count = 1) =>
  vi.waitFor(() => expect(lines(text)).toHaveLength(count), { timeout: 10_000, interval: 20 });

describe('an acknowledged PagerDuty incident grouping several of our alerts', () => {
  it('acknowledges each of ours (two pages read), lets another tool’s be, and gives them back', async () => {
    await withKey();
    const [named, second, third] = await fireThree();
    const incident = pd.group([named!, second!, 'another-tools-alert', third!]);
    pd.maxLimit = 2;

    world.clock.advance(MINUTE);
    const ack = { dedupKey: named!, eventType: 'incident.acknowledged' as const, agent: 'Alice' };
    const taken = await pd.act(to(), { ...ack, occurredAt: world.clock.now() });
    expect(taken.status).toBe(200);
    await settled("the incident's alerts read");
    expect([named, second, third].map((fp) => acknowledgedBy(fp!))).toEqual(['Alice', 'Alice', 'Alice']);
    for (const fp of [named, second, third]) {
      expect(alertStoreOf(world.wd!.store).get(fp!)?.acknowledgement).toMatchObject({ via: 'pagerduty' });
      expect(kinds(fp!)).toEqual(['firing', 'acknowledged']);
    }
    // Read as documented: two pages, by offset, with the key and the version asked for.
    expect(restReads().map((r) => r.url)).toEqual([
      `/incidents/${incident}/alerts?limit=50&offset=0`,
      `/incidents/${incident}/alerts?limit=50&offset=2`,
    ]);
    expect(lines("the incident's alerts read")[0]).toContain('"ours":3');

    // Their repeats stop: hours on, still failing, nothing new said of them.
    world.clock.advance(5 * HOUR);
    expect((await world.wd!.runOnce(['urls'])).complete).toBe(true);
    await world.wd!.deliverDue();
    for (const fp of [named, second, third]) expect(kinds(fp!)).toEqual(['firing', 'acknowledged']);

    // A replay changes nothing and reads nothing.
    await fetch(to().url, { method: 'POST', headers: taken.sent.headers, body: taken.sent.body });
    expect(restReads()).toHaveLength(2);

    // Given back in PagerDuty: each given back here.
    world.clock.advance(MINUTE);
    const back = { ...ack, eventType: 'incident.unacknowledged' as const, agent: null, occurredAt: world.clock.now() };
    expect((await pd.act(to(), back)).status).toBe(200);
    await settled("the incident's alerts read", 2);
    expect([named, second, third].map((fp) => acknowledgedBy(fp!))).toEqual([null, null, null]);
    for (const fp of [named, second, third]) expect(kinds(fp!).at(-1)).toBe('unacknowledged');
    expect(world.logs.text()).not.toContain('could not be read');
    expect(world.leaks([pd.apiKey, PD_SECRET, pd.routingKey])).toEqual([]);
  });

  it.each<[string, string | undefined, FakeAnswer | undefined, string, string]>([
    ['a wrong key (401)', WRONG_KEY, undefined, 'PagerDuty answered 401', ''],
    ['a server error (500)', undefined, { status: 500, body: { error: { message: 'oops' } } }, 'answered 500', ''],
    ['an answer not a list of alerts', undefined, { status: 200, body: '<html>' }, 'not a list of alerts', ''],
    ['no answer', undefined, { status: 200, hang: true }, 'no answer within 1000 ms', '\ntimeout: 1000'],
  ])('acknowledges the named alert only when the read fails: %s', async (_, key, answer, reason, channelExtra) => {
    await daemon(`, api_key: "\${PD_API_KEY}", api_url: ${pd.root}`, { PD_API_KEY: key ?? pd.apiKey }, channelExtra);
    const [named, second, third] = await fireThree();
    pd.group([named!, second!, third!]);
    if (answer) pd.answerNext(answer);

    world.clock.advance(MINUTE);
    const ack = { dedupKey: named!, eventType: 'incident.acknowledged' as const, agent: 'Bob' };
    expect((await pd.act(to(), { ...ack, occurredAt: world.clock.now() })).status).toBe(200);
    await settled('only the alert it is named after is taken');
    const warned = lines('only the alert it is named after is taken');
    expect(warned[0]).toContain(reason);
    expect(warned[0]).toContain('"channel":"oncall"');
    expect(warned[0]).toContain('"level":40');
    await vi.waitFor(() => expect(acknowledgedBy(named!)).toBe('Bob'), { timeout: 10_000, interval: 20 });
    expect([second, third].map((fp) => acknowledgedBy(fp!))).toEqual([null, null]);
    expect(world.leaks([pd.apiKey, WRONG_KEY, PD_SECRET, pd.routingKey])).toEqual([]);
  });

  it('acknowledges the named alert only without an api_key, and says so once at the start', async () => {
    await daemon('');
    const said = lines('PagerDuty webhook without api_key');
    expect(said).toHaveLength(1);
    expect(said[0]).toContain('"channel":"oncall"');
    const [named, second] = await fireThree();
    pd.group([named!, second!]);

    world.clock.advance(MINUTE);
    const ack = { dedupKey: named!, eventType: 'incident.acknowledged' as const, agent: 'Carol' };
    expect((await pd.act(to(), { ...ack, occurredAt: world.clock.now() })).status).toBe(200);
    // Done before the answer, as before: nothing read.
    expect(acknowledgedBy(named!)).toBe('Carol');
    expect(acknowledgedBy(second!)).toBeNull();
    expect(restReads()).toEqual([]);
    expect(lines('PagerDuty webhook without api_key')).toHaveLength(1);

    // The other alert of the incident keeps repeating here: what the api_key is for.
    world.clock.advance(5 * HOUR);
    expect((await world.wd!.runOnce(['urls'])).complete).toBe(true);
    await world.wd!.deliverDue();
    expect(kinds(named!)).toEqual(['firing', 'acknowledged']);
    expect(kinds(second!)).toContain('repeat');
  });
});
