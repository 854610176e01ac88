/**
 * The Socket Mode thread against the fake Slack's WebSocket: what the peer sends that is no
 * envelope to read (not JSON, larger than 1 MiB, binary, a JSON array) or an envelope of another
 * type is one bad envelope: said once however often it comes, never handed on, and the thread and
 * its connection carry on (the next click is acknowledged and handed over). An envelope sent
 * twice is handed over once. Releasing the last connection ends the thread. No token in the log.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { Secret } from '../../src/lib/secret.js';
import { MAX_ENVELOPE_BYTES } from '../../src/interactions/slack-socket-receiver.js';
import { SocketModeThread, type SocketModeLink } from '../../src/interactions/socket-mode-thread.js';
import { startSlackApi, type SlackApi } from '../helpers/slack-api.js';
import { LogCapture } from '../notify/notify-fixture.js';

const APP_TOKEN = 'xapp-1-thread-SECRET-token';
const CLICK = {
  user: { id: 'U0ALICE' },
  message: { channel: 'C0ALERTS', ts: '1.000100' },
  value: 'acknowledge:1a2b3c4d',
};

// Starting the thread loads the Slack library (and our modules through tsx): seconds on a loaded machine.
vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });
/** What a line or a hand-over may take to cross from the thread on a loaded machine. */
const WAIT = { timeout: 15_000, interval: 20 };

let slack: SlackApi;
let log: LogCapture;
let thread: SocketModeThread;
let link: SocketModeLink | undefined;
let payloads: unknown[] = [];
/** Where the log stood when the test began. */
let from = 0;

// One thread and connection for every test (each starts it once the last one let go of it).
beforeAll(async () => {
  slack = await startSlackApi({ token: 'xoxb-bot', appToken: APP_TOKEN });
  log = new LogCapture();
  // Its own owner: a daemon's is its store.
  thread = SocketModeThread.of({}, log.logger);
  link = thread.reserve({ appToken: new Secret(APP_TOKEN), apiUrl: slack.url, channels: ['ops-app'] });
  link.start((p) => payloads.push(p));
  await slack.connected();
});
beforeEach(() => {
  payloads = [];
  from = log.lines.length;
});
afterAll(async () => {
  await link?.release();
  await slack.close();
});

/** The log lines of this test that say an envelope was ignored. */
const ignoredLines = () => log.lines.slice(from).filter((l) => l.includes('a Socket Mode envelope'));

const huge = JSON.stringify({
  envelope_id: 'e-huge',
  type: 'interactive',
  payload: { type: 'block_actions', pad: 'x'.repeat(MAX_ENVELOPE_BYTES + 1) },
});

describe('the Socket Mode thread', () => {
  it.each<[string, string | Buffer, RegExp]>([
    ['text that is not JSON', '{"envelope_id": "e1", "type": "interactive", "payl', /ignored: not JSON"/],
    ['a JSON array', '[1, 2, 3]', /JSON, but not an object/],
    ['a frame larger than 1 MiB', huge, /larger than 1048576 bytes, not read/],
    ['a binary frame', Buffer.from([0, 1, 2, 3]), /a binary frame/],
    [
      'an envelope of another type',
      JSON.stringify({ envelope_id: 'e-other', type: 'events_api', payload: { event: { type: 'app_mention' } } }),
      /of another type than a button click was acknowledged and ignored/,
    ],
  ])('takes %s as one bad envelope: said once, never handed on, the next click taken', async (_what, frame, said) => {
    for (let i = 0; i < 3; i++) slack.sendOverSocket(frame);
    await slack.clickOverSocket(CLICK);
    await vi.waitFor(() => expect(payloads).toHaveLength(1), WAIT);
    expect(payloads[0]).toMatchObject({ type: 'block_actions', user: { id: 'U0ALICE' } });
    // In order on one connection: the lines about the bad frames came before the click.
    expect(ignoredLines()).toHaveLength(1);
    expect(ignoredLines()[0]).toMatch(said);
    // The same connection all along.
    expect(slack.connections).toBe(1);
    expect(thread.running).toBe(true);
    expect(log.text()).not.toContain('SECRET');
  });

  it('acknowledges an envelope of another type (Slack would send it again otherwise)', async () => {
    slack.sendOverSocket(JSON.stringify({ envelope_id: 'e-other', type: 'slash_commands', payload: {} }));
    await vi.waitFor(() => expect(slack.acks).toContain('e-other'), WAIT);
    expect(payloads).toEqual([]);
  });

  it('hands over an envelope sent twice once, acknowledging both', async () => {
    const made = slack.socketClick(CLICK);
    slack.sendOverSocket(made.envelope);
    slack.sendOverSocket(made.envelope);
    await vi.waitFor(() => expect(slack.acks.filter((a) => a === made.envelopeId)).toHaveLength(2), WAIT);
    await slack.clickOverSocket(CLICK);
    await vi.waitFor(() => expect(payloads).toHaveLength(2), WAIT);
    expect(log.text()).toContain('a Socket Mode envelope taken before came again');
  });

  it('hands over a click Slack resends in a new envelope once, acknowledging both', async () => {
    // Slack resends an envelope it saw no acknowledgement of in time, and may give the resend an id of its own.
    const made = slack.socketClick(CLICK);
    const resent = { ...JSON.parse(made.envelope), envelope_id: 'e-resent', retry_attempt: 1, retry_reason: 'timeout' };
    slack.sendOverSocket(made.envelope);
    slack.sendOverSocket(JSON.stringify(resent));
    await vi.waitFor(() => expect(slack.acks).toEqual(expect.arrayContaining([made.envelopeId, 'e-resent'])), WAIT);
    await slack.clickOverSocket(CLICK);
    await vi.waitFor(() => expect(payloads).toHaveLength(2), WAIT);
    // In order on one connection: the second handed over is the later click, not the resend.
    const triggers = payloads.map((p) => (p as { trigger_id: string }).trigger_id);
    expect(new Set(triggers).size).toBe(2);
    expect(log.text()).toContain('a Socket Mode envelope taken before came again');
  });

  it('closes the connection and ends the thread when the last holder lets go', async () => {
    // A second holder (a reload's new runtime) keeps it; the last one's release ends it.
    const next = thread.reserve({ appToken: new Secret(APP_TOKEN), apiUrl: slack.url, channels: ['ops-app'] });
    await link!.release();
    expect(thread.running).toBe(true);
    expect(slack.openSockets).toBe(1);
    await next.release();
    link = undefined;
    expect(thread.running).toBe(false);
    await vi.waitFor(() => expect(slack.openSockets).toBe(0), WAIT);
  });
});
