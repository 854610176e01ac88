/**
 * The Socket Mode thread against the fake Slack's WebSocket: what the peer sends that is no
 * envelope to read (not JSON, larger than 1 MiB, binary, a JSON array) or an envelope of another
 * type is one bad envelope: said once however often it comes, never handed on, and the thread and
 * its connection carry on (the next click is acknowledged and handed over). An envelope sent
 * twice is handed over once. Releasing the last connection ends the thread. No token in the log.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Secret } from '../../src/config/secret.js';
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

// Each test starts the thread, which loads the Slack library through tsx: seconds on a loaded machine.
vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

let slack: SlackApi;
let log: LogCapture;
let thread: SocketModeThread;
let link: SocketModeLink | undefined;
let payloads: unknown[];

beforeEach(async () => {
  slack = await startSlackApi({ token: 'xoxb-bot', appToken: APP_TOKEN });
  log = new LogCapture();
  // Its own owner: a daemon's is its store.
  thread = SocketModeThread.of({}, log.logger);
  payloads = [];
  link = thread.reserve({ appToken: new Secret(APP_TOKEN), apiUrl: slack.url, channels: ['ops-app'] });
  link.start((p) => payloads.push(p));
  await slack.connected();
});
afterEach(async () => {
  await link?.release();
  await slack.close();
});

/** The log lines that say an envelope was ignored. */
const ignoredLines = () => log.lines.filter((l) => l.includes('a Socket Mode envelope'));

const huge = JSON.stringify({
  envelope_id: 'e-huge',
  type: 'interactive',
  payload: { type: 'block_actions', pad: 'x'.repeat(MAX_ENVELOPE_BYTES + 1) },
});

describe('the Socket Mode thread', () => {
  it.each<[string, string | Buffer, RegExp]>([
    ['text that is not JSON', '{"envelope_id": "e1", "type": "interactive", "payl', /not a JSON object/],
    ['a JSON array', '[1, 2, 3]', /not a JSON object/],
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
    await vi.waitFor(() => expect(payloads).toHaveLength(1));
    expect(payloads[0]).toMatchObject({ type: 'block_actions', user: { id: 'U0ALICE' } });
    // In order on one connection: the lines about the bad frames came before the click.
    expect(ignoredLines()).toHaveLength(1);
    expect(ignoredLines()[0]).toMatch(said);
    expect(slack.connections).toBe(1);
    expect(thread.running).toBe(true);
    expect(log.text()).not.toContain('SECRET');
  });

  it('acknowledges an envelope of another type (Slack would send it again otherwise)', async () => {
    slack.sendOverSocket(JSON.stringify({ envelope_id: 'e-other', type: 'slash_commands', payload: {} }));
    await vi.waitFor(() => expect(slack.acks).toContain('e-other'));
    expect(payloads).toEqual([]);
  });

  it('hands over an envelope sent twice once, acknowledging both', async () => {
    const made = slack.socketClick(CLICK);
    slack.sendOverSocket(made.envelope);
    slack.sendOverSocket(made.envelope);
    await vi.waitFor(() => expect(slack.acks.filter((a) => a === made.envelopeId)).toHaveLength(2));
    await slack.clickOverSocket(CLICK);
    await vi.waitFor(() => expect(payloads).toHaveLength(2));
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
    await vi.waitFor(() => expect(slack.openSockets).toBe(0));
  });
});
