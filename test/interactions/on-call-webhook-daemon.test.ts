/**
 * The way back from PagerDuty and Opsgenie, end to end: the daemon (started, its listener on an
 * ephemeral port, a ManualClock) fires an alert to the tool's protocol-level fake and to a Slack
 * app channel; a person acknowledges it in the tool, whose webhook (signed by PagerDuty's rules,
 * or carrying Opsgenie's custom header) reaches the daemon's listener: the alert is acknowledged
 * here, once, its timeline says who and where, the Slack app's living message says it, and the
 * tool is not told back what it told us. Giving it back in the tool gives it back here. A forged,
 * unsigned or wrong-token post changes nothing and is refused; a replay changes nothing; an event
 * not used, an alert not ours, are answered and let be; a hostile name stays text. No secret is
 * in the log or the state.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { eventsOfAlert, alertStoreOf } from '../../src/alerts/alert-store.js';
import { PAGERDUTY_LIMITS } from '../../src/notify/channels/pagerduty.js';
import { incidentKey } from '../../src/notify/channels/incident-parts.js';
import { MINUTE } from '../app/fixtures.js';
import { freePort } from '../console/console-fixture.js';
import { postWebhook } from '../helpers/fake-service.js';
import { startOpsgenieFake, type OpsgenieFake } from '../helpers/opsgenie-fake.js';
import { pagerdutyWebhookSignature, startPagerDutyFake, type PagerDutyFake } from '../helpers/pagerduty-fake.js';
import { startSlackApi, type SlackApi } from '../helpers/slack-api.js';
import { OnCallWorld } from '../notify/on-call-fixture.js';

const BOT_TOKEN = 'xoxb-oncall-SECRET-bot-token';
const PD_SECRET = 'pd-SECRET-webhook-signing-0123456789';
const OG_TOKEN = 'og-SECRET-webhook-token-0123456789';
/** A name that tries markup on every surface it is shown on: Slack, HTML, a log line. */
const HOSTILE_NAME = '<script>alert(1)</script> *bold* <!channel> @here\n\u001b[31mred';

let world: OnCallWorld;
let slack: SlackApi;
let port: number;

beforeEach(async () => {
  world = await OnCallWorld.start();
  slack = await startSlackApi({ token: BOT_TOKEN, now: () => world.clock.now() });
  port = await freePort();
});
afterEach(async () => {
  await world.close();
  await slack.close();
});

/** Starts the daemon with `channel` (named oncall) and a Slack app channel, both told the certificates alerts. */
async function daemon(channel: string, env: Record<string, string>): Promise<void> {
  world.open(
    channel,
    { ...env, SLACK_BOT_TOKEN: BOT_TOKEN },
    '{ match: { check: certificates }, channels: [oncall, app] }',
    {
      server: `{ listen: "127.0.0.1:${port}", console: { public_url: "https://watchdog.example.com" } }`,
      // One cycle of each at start, none after: the test runs the urls job itself.
      jobs: 'jobs: { runs: "off", attention: "off", urls: "0 0 1 1 *", backups: "off", maintenance: "off", servers: "off", installers: "off", jitter: 0s }',
      also: `{ name: app, type: slack_app, bot_token: "\${SLACK_BOT_TOKEN}", channel: C0ALERTS, api_url: "${slack.url}" }`,
    },
  );
  await world.wd!.start();
}

/** The alert's events, by kind. */
const kinds = (fingerprint: string) => eventsOfAlert(world.wd!.store, fingerprint).map((e) => e.kind);
/** The Slack app's living message of the alert, as shown now. */
const livingText = () =>
  JSON.stringify(
    slack
      .messages()
      .filter((m) => !m.thread_ts)
      .map((m) => [m.blocks, m.attachments]),
  );
/** The decisions on the tool's channel for events of `kind`. */
const decisions = (kind: string) =>
  (
    world
      .wd!.store.db.prepare(
        `SELECT o.decision FROM outbox o JOIN events e ON e.id = o.event_id WHERE o.channel = 'oncall' AND e.kind = ?`,
      )
      .all(kind) as { decision: string }[]
  ).map((r) => r.decision);
/** The console's page of the alert, as text. */
async function consoleTimeline(fingerprint: string): Promise<string> {
  const page = await (await fetch(`http://127.0.0.1:${port}/alert?fp=${encodeURIComponent(fingerprint)}`)).text();
  expect(page).not.toContain('<script>alert(1)');
  return page.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');
}

describe('PagerDuty V3 webhooks', () => {
  let pd: PagerDutyFake;
  beforeEach(async () => {
    pd = await startPagerDutyFake();
  });
  afterEach(async () => {
    await pd.close();
  });

  const open = () =>
    daemon(
      `name: oncall
type: pagerduty
routing_key: "\${PD_KEY}"
api_url: ${pd.root}
webhook: { signing_secret: "\${PD_WEBHOOK_SECRET}" }`,
      { PD_KEY: pd.routingKey, PD_WEBHOOK_SECRET: PD_SECRET },
    );
  const to = (secret = PD_SECRET) => ({ url: `http://127.0.0.1:${port}/pagerduty/oncall`, secret });

  it('acknowledges here what was acknowledged in PagerDuty, shows it everywhere but PagerDuty, and gives it back', async () => {
    await open();
    const { urlId } = world.hostileApp();
    const fingerprint = await world.fire(urlId);
    expect(pd.alerts.get(fingerprint)?.status).toBe('triggered');
    expect(livingText()).toContain('CRITICAL');

    // Forged: another secret, no signature, a signature of another body. Refused; nothing written.
    const ack = { dedupKey: fingerprint, eventType: 'incident.acknowledged' as const, agent: 'Mallory' };
    expect((await pd.act(to('another-secret-0123456789abcdef'), ack)).status).toBe(401);
    expect((await pd.act(to(), { ...ack, signatures: [] })).status).toBe(401);
    expect((await pd.act(to(), { ...ack, signatures: [`v1=${'0'.repeat(64)}`] })).status).toBe(401);
    expect(alertStoreOf(world.wd!.store).get(fingerprint)?.acknowledgement).toBeNull();
    expect(kinds(fingerprint)).toEqual(['firing']);
    expect(world.logs.text()).toContain('PagerDuty webhook refused');

    // Acknowledged in PagerDuty, by someone whose name tries markup.
    world.clock.advance(MINUTE);
    const taken = await pd.act(to(), { ...ack, agent: HOSTILE_NAME });
    expect(taken.status).toBe(200);
    const acknowledgement = alertStoreOf(world.wd!.store).get(fingerprint)?.acknowledgement;
    expect(acknowledgement).toMatchObject({ via: 'pagerduty', at: world.clock.now() });
    // One line, control characters gone: shown as text wherever it goes.
    expect(acknowledgement?.by).toContain('<script>alert(1)</script> *bold* <!channel> @here');
    expect(acknowledgement?.by).not.toContain('\n');
    expect(acknowledgement?.by).not.toContain('\u001b');
    await world.wd!.deliverDue();
    expect(kinds(fingerprint)).toEqual(['firing', 'acknowledged']);
    expect(livingText()).toContain('acknowledged by &lt;script&gt;');
    expect(livingText()).not.toContain('<!channel>');
    // PagerDuty is not told back what it told us.
    expect(decisions('acknowledged')).toEqual(['acknowledged_there']);
    expect(pd.events.map((e) => e.event_action)).toEqual(['trigger']);
    expect(await consoleTimeline(fingerprint)).toContain('(pagerduty)');

    // The same webhook again (a replay, or PagerDuty retrying): nothing more.
    expect(await postWebhook(to().url, taken.sent)).toBe(200);
    // Acknowledged again in PagerDuty (another event): already acknowledged, nothing more.
    expect((await pd.act(to(), ack)).status).toBe(200);
    await world.wd!.deliverDue();
    expect(kinds(fingerprint)).toEqual(['firing', 'acknowledged']);

    // Events not used, and an incident not ours: answered 200, nothing written.
    expect((await pd.act(to(), { ...ack, eventType: 'incident.priority_updated' })).status).toBe(200);
    expect((await pd.act(to(), { ...ack, dedupKey: 'someone-elses-incident' })).status).toBe(200);
    expect(kinds(fingerprint)).toEqual(['firing', 'acknowledged']);

    // Given back in PagerDuty by an automation (no agent): named PagerDuty.
    world.clock.advance(MINUTE);
    const back = await pd.act(to(), { dedupKey: fingerprint, eventType: 'incident.unacknowledged', agent: null });
    expect(back.status).toBe(200);
    expect(alertStoreOf(world.wd!.store).get(fingerprint)?.acknowledgement).toBeNull();
    await world.wd!.deliverDue();
    expect(kinds(fingerprint)).toEqual(['firing', 'acknowledged', 'unacknowledged']);
    expect(eventsOfAlert(world.wd!.store, fingerprint).at(-1)?.acknowledgement).toMatchObject({
      by: 'PagerDuty',
      via: 'pagerduty',
      channel: 'oncall',
    });

    // Resolved in PagerDuty: not ours to decide (the check resolves it); answered and let be.
    expect((await pd.act(to(), { ...ack, eventType: 'incident.resolved' })).status).toBe(200);
    expect(alertStoreOf(world.wd!.store).get(fingerprint)?.status).toBe('firing');
    expect(world.leaks([PD_SECRET, pd.routingKey, BOT_TOKEN])).toEqual([]);
  });

  it('wakes the delivery loop: the acknowledgement shows in Slack without waiting for the next round', async () => {
    await open();
    const { urlId } = world.hostileApp();
    const fingerprint = await world.fire(urlId);
    world.clock.advance(MINUTE);
    const ack = { dedupKey: fingerprint, eventType: 'incident.acknowledged' as const, agent: 'Alice' };
    expect((await pd.act(to(), ack)).status).toBe(200);
    // No deliverDue, and the loop sleeps past the minute moved on the ManualClock: only a wake routes it.
    await vi.waitFor(() => expect(livingText()).toContain('acknowledged by Alice'), { timeout: 10_000 });
    expect(decisions('acknowledged')).toEqual(['acknowledged_there']);
  });

  it('lets be an acknowledgement delivered after what happened since: its giving back, a new firing', async () => {
    await open();
    const { urlId } = world.hostileApp();
    const fingerprint = await world.fire(urlId);
    const acknowledgement = () => alertStoreOf(world.wd!.store).get(fingerprint)?.acknowledgement ?? null;
    const ack = { dedupKey: fingerprint, eventType: 'incident.acknowledged' as const, agent: 'Alice' };

    // Alice acknowledged at t1, PagerDuty gave it back at t2 (its acknowledgement timeout); delivered in reverse.
    world.clock.advance(MINUTE);
    const t1 = world.clock.now();
    world.clock.advance(MINUTE);
    const t2 = world.clock.now();
    const back = { ...ack, eventType: 'incident.unacknowledged' as const, agent: null, occurredAt: t2 };
    expect((await pd.act(to(), back)).status).toBe(200);
    expect((await pd.act(to(), { ...ack, occurredAt: t1 })).status).toBe(200);
    expect(acknowledgement()).toBeNull();
    expect(world.logs.text()).toContain('PagerDuty webhook older than what happened since: ignored');

    // A newer one is taken.
    world.clock.advance(MINUTE);
    expect((await pd.act(to(), { ...ack, occurredAt: world.clock.now() })).status).toBe(200);
    expect(acknowledgement()).toMatchObject({ by: 'Alice', via: 'pagerduty' });

    // Over and firing again: an acknowledgement of the last incident, delivered late, is not one of this.
    const before = world.clock.now();
    await world.resolve(urlId);
    world.clock.advance(MINUTE);
    expect(await world.fire(urlId)).toBe(fingerprint);
    expect((await pd.act(to(), { ...ack, agent: 'Bob', occurredAt: before })).status).toBe(200);
    expect(acknowledgement()).toBeNull();
  });

  it('says a flood of forged posts once a minute with a count, and cuts a long channel name in the log', async () => {
    await open();
    const refusedLines = () =>
      world.logs
        .text()
        .split('\n')
        .filter((l) => l.includes('PagerDuty webhook refused'));
    const forged = { body: '{}', headers: { 'x-pagerduty-signature': `v1=${'0'.repeat(64)}` } };
    for (let i = 0; i < 200; i++) expect(await postWebhook(to().url, forged)).toBe(401);
    const longName = 'N'.repeat(12_000);
    expect(await postWebhook(`http://127.0.0.1:${port}/pagerduty/${longName}`, forged)).toBe(401);
    // One line said, the other 200 held: anyone may post, so nobody may fill the log.
    expect(refusedLines()).toHaveLength(1);

    // A minute on, the next one is said with the count of those held.
    world.clock.advance(MINUTE + 1_000);
    expect(await postWebhook(`http://127.0.0.1:${port}/pagerduty/${longName}`, forged)).toBe(401);
    const lines = refusedLines();
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain('repeated 201 times');
    expect(lines[1]).toContain(`${'N'.repeat(100)}...`);
    expect(lines[1]).not.toContain('N'.repeat(101));
  });

  it('takes a signature among several (a rotation), and an alert keyed by the hash of a long fingerprint', async () => {
    await open();
    const { urlId } = world.hostileApp();
    const fingerprint = await world.fire(urlId);
    const body = { dedupKey: fingerprint, eventType: 'incident.acknowledged' as const, agent: 'Bob' };
    // The fake signs with the secret given; a rotation's header holds the old and the new.
    const first = await pd.act(to('the-old-secret-0123456789abcdef'), body);
    expect(first.status).toBe(401);
    const rotated = `${first.sent.headers['x-pagerduty-signature']}, ${pagerdutyWebhookSignature(PD_SECRET, first.sent.body)}`;
    expect(await postWebhook(to().url, { ...first.sent, headers: { 'x-pagerduty-signature': rotated } })).toBe(200);
    expect(alertStoreOf(world.wd!.store).get(fingerprint)?.acknowledgement?.by).toBe('Bob');

    // A fingerprint past 255 characters is keyed by its hash in PagerDuty: found back by it.
    const long = `certificates/url/${'x'.repeat(300)}`;
    world
      .wd!.store.db.prepare(
        `INSERT INTO alerts (fingerprint, job, check_name, status, severity, summary, details, labels,
           first_seen_at, last_seen_at, seen_count, fired_at, last_notified_at)
         VALUES (?, 'urls', 'certificates', 'firing', 'warning', 'long', '{}', '{"check":"certificates"}', 1, 1, 1, 1, 1)`,
      )
      .run(long);
    const key = incidentKey(long, PAGERDUTY_LIMITS.dedupKey);
    expect(key).toMatch(/^sha256:/);
    expect((await pd.act(to(), { ...body, dedupKey: key, agent: 'Carol' })).status).toBe(200);
    expect(alertStoreOf(world.wd!.store).get(long)?.acknowledgement).toMatchObject({ by: 'Carol', via: 'pagerduty' });
  });

  it('refuses every post to a channel without a webhook section, or of another kind, alike', async () => {
    await open();
    const { urlId } = world.hostileApp();
    const fingerprint = await world.fire(urlId);
    const ack = { dedupKey: fingerprint, eventType: 'incident.acknowledged' as const, agent: 'Bob' };
    for (const path of ['/pagerduty/app', '/pagerduty/nowhere', '/pagerduty/console']) {
      expect((await pd.act({ url: `http://127.0.0.1:${port}${path}`, secret: PD_SECRET }, ack)).status).toBe(401);
    }
    const get = await fetch(`http://127.0.0.1:${port}/pagerduty/oncall`);
    expect(get.status).toBe(405);
    expect(alertStoreOf(world.wd!.store).get(fingerprint)?.acknowledgement).toBeNull();
  });
});

describe('the Opsgenie Webhook integration', () => {
  let og: OpsgenieFake;
  beforeEach(async () => {
    og = await startOpsgenieFake();
  });
  afterEach(async () => {
    await og.close();
  });

  const open = () =>
    daemon(
      `name: oncall
type: opsgenie
api_key: "\${OG_KEY}"
api_url: ${og.root}
webhook: { token: "\${OG_WEBHOOK_TOKEN}" }`,
      { OG_KEY: og.apiKey, OG_WEBHOOK_TOKEN: OG_TOKEN },
    );
  const url = () => `http://127.0.0.1:${port}/opsgenie/oncall`;

  it.each([
    ['its custom header', { 'X-Deploy-Watchdog-Token': OG_TOKEN }],
    ['a bearer token', { Authorization: `Bearer ${OG_TOKEN}` }],
  ])('acknowledges here what was acknowledged in Opsgenie (the token in %s), and gives it back', async (_, headers) => {
    await open();
    const { urlId } = world.hostileApp();
    const fingerprint = await world.fire(urlId);
    expect(og.alerts.get(fingerprint)?.status).toBe('open');
    const ack = { alias: fingerprint, action: 'Acknowledge' as const, username: HOSTILE_NAME };

    const wrongs: Record<string, string>[] = [
      {},
      { 'X-Deploy-Watchdog-Token': 'wrong-token-0123456789' },
      { Authorization: 'Bearer x' },
    ];
    for (const wrong of wrongs) {
      expect((await og.act({ url: url(), headers: wrong }, ack)).status).toBe(401);
    }
    expect(alertStoreOf(world.wd!.store).get(fingerprint)?.acknowledgement).toBeNull();
    expect(world.logs.text()).toContain('Opsgenie webhook refused');

    world.clock.advance(MINUTE);
    const taken = await og.act({ url: url(), headers }, ack);
    expect(taken.status).toBe(200);
    expect(alertStoreOf(world.wd!.store).get(fingerprint)?.acknowledgement).toMatchObject({ via: 'opsgenie' });
    await world.wd!.deliverDue();
    expect(kinds(fingerprint)).toEqual(['firing', 'acknowledged']);
    expect(livingText()).toContain('acknowledged by &lt;script&gt;');
    // Opsgenie is not told back: no acknowledge request reached it.
    expect(decisions('acknowledged')).toEqual(['acknowledged_there']);
    expect(og.failedRequests).toEqual([]);
    expect(await consoleTimeline(fingerprint)).toContain('(opsgenie)');

    // A replay, a note, a close: nothing written (the check decides when it is over).
    expect(await postWebhook(url(), taken.sent)).toBe(200);
    expect((await og.act({ url: url(), headers }, { ...ack, action: 'AddNote' })).status).toBe(200);
    expect(kinds(fingerprint)).toEqual(['firing', 'acknowledged']);

    world.clock.advance(MINUTE);
    expect(
      (await og.act({ url: url(), headers }, { ...ack, action: 'UnAcknowledge', username: 'bob@example.com' })).status,
    ).toBe(200);
    expect(alertStoreOf(world.wd!.store).get(fingerprint)?.acknowledgement).toBeNull();
    expect(kinds(fingerprint)).toEqual(['firing', 'acknowledged', 'unacknowledged']);
    expect(world.leaks([OG_TOKEN, og.apiKey, BOT_TOKEN])).toEqual([]);
  });

  it('lets be an acknowledgement delivered after its giving back', async () => {
    await open();
    const { urlId } = world.hostileApp();
    const fingerprint = await world.fire(urlId);
    const headers = { 'X-Deploy-Watchdog-Token': OG_TOKEN };
    world.clock.advance(MINUTE);
    const t1 = world.clock.now();
    world.clock.advance(MINUTE);
    const back = {
      alias: fingerprint,
      action: 'UnAcknowledge' as const,
      username: 'bob',
      occurredAt: world.clock.now(),
    };
    expect((await og.act({ url: url(), headers }, back)).status).toBe(200);
    const late = { alias: fingerprint, action: 'Acknowledge' as const, username: 'alice', occurredAt: t1 };
    expect((await og.act({ url: url(), headers }, late)).status).toBe(200);
    expect(alertStoreOf(world.wd!.store).get(fingerprint)?.acknowledgement).toBeNull();
    expect(world.logs.text()).toContain('Opsgenie webhook older than what happened since: ignored');
  });
});
