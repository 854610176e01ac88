import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { Harness, payloadText, slackTo } from './notify-fixture.js';

const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'crash-child.ts');

let receiver: WebhookReceiver | undefined;
let h: Harness | undefined;
let dir: string | undefined;

afterEach(async () => {
  await h?.close();
  h = undefined;
  await receiver?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe('a crash between sending and marking', () => {
  it('SIGKILL while the message is in flight: the next start sends it again, once', async () => {
    receiver = await startWebhookReceiver();
    receiver.setMode('hang');
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dw-crash-'));
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, dir, receiver.url], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<NodeJS.Signals | number | null>((resolve) =>
      child.on('exit', (code, signal) => resolve(signal ?? code)),
    );

    // The request reached the receiver: the child is between send and mark. The child compiles its
    // sources through tsx first: seconds of CPU, many more on a loaded machine (20 s was once too few).
    await vi.waitFor(() => expect(receiver?.requests, stderr).toBe(1), { timeout: 120_000, interval: 50 });
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');

    receiver.setMode('ok');
    h = Harness.open({ dir, channels: [slackTo('ops', receiver.url)] });
    expect(h.rows()).toMatchObject([{ status: 'pending', attempts: 0 }]);
    expect(await h.notifier.deliverDue()).toMatchObject({ sent: 1, waiting: 0 });
    await h.notifier.deliverDue();

    // Two requests in all: the one killed in flight and one resend; nothing after.
    expect(receiver.requests).toBe(2);
    expect(receiver.received).toHaveLength(1);
    expect(payloadText(receiver.received[0])).toContain('Problem shop');
    expect(h.rows()).toMatchObject([{ status: 'sent', attempts: 1 }]);
  }, 180_000);
});
