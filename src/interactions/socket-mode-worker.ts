/**
 * The Socket Mode thread: the daemon's Socket Mode connections (`slack-socket-receiver.ts`), away
 * from the main thread, which blocks while a PostgreSQL statement runs. Each envelope is
 * acknowledged here at once, whatever the main thread is doing (Slack wants it within 3 s), and
 * an interaction is posted to the main thread, which acts on it as on a click over HTTP. It waits
 * on no statement and holds no state of the daemon's: its clock is the system's (the backoff and
 * the replay window), its log lines are posted to the main thread scrubbed of the tokens.
 * Started by `socket-mode-thread.ts`.
 */
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { Secret } from '../lib/secret.js';
import { systemClock } from '../lib/clock.js';
import { errorText } from '../lib/error-text.js';
import type { ThreadEnd, ThreadSays } from '../lib/supervised-thread.js';
import type { FromSocketThread, ToSocketThread } from './socket-mode-protocol.js';
import { SocketReceiver, type ReceiverLog } from './slack-socket-receiver.js';

/** Runs the Socket Mode thread on `port` (see the file's comment). */
export function socketModeWorker(port: MessagePort | NonNullable<typeof parentPort>): void {
  const say = (m: FromSocketThread | ThreadSays) => port.postMessage(m);
  const open = new Map<number, SocketReceiver>();
  // A token that closed stays among those scrubbed: its receiver's last lines come after.
  const tokens = new Set<Secret>();
  const line =
    (level: 'info' | 'warn' | 'error') =>
    (fields: Record<string, unknown>, msg: string): void => {
      const secrets = [...tokens];
      const scrubbed = JSON.parse(Secret.scrub(JSON.stringify(fields), secrets)) as Record<string, unknown>;
      say({ type: 'log', level, fields: scrubbed, msg: Secret.scrub(msg, secrets) });
    };
  const log: ReceiverLog = { info: line('info'), warn: line('warn'), error: line('error') };
  const close = async (id: number) => {
    const got = open.get(id);
    open.delete(id);
    await got
      ?.stop()
      .catch((err: unknown) => log.warn({ err: errorText(err) }, 'cannot close a Socket Mode connection'));
  };
  port.on('message', (m: ToSocketThread | ThreadEnd) => {
    if (m.type === 'open') {
      const token = new Secret(m.appToken);
      tokens.add(token);
      const receiver = new SocketReceiver({
        appToken: token,
        apiUrl: m.apiUrl,
        channels: m.channels,
        onPayload: (payload) => say({ type: 'interaction', id: m.id, payload }),
        clock: systemClock,
        log,
      });
      open.set(m.id, receiver);
      receiver.start();
    } else if (m.type === 'close') {
      void close(m.id).then(() => say({ type: 'closed', id: m.id }));
    } else {
      void Promise.all([...open.keys()].map(close)).then(() => {
        say({ type: 'ended' });
        port.close();
      });
    }
  });
  say({ type: 'ready' });
}

if (parentPort && (workerData as { socketMode?: boolean } | null)?.socketMode) socketModeWorker(parentPort);
