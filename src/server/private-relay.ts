import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { RelayTarget } from './front-door-protocol.js';

/**
 * A new relay target: the socket `file` in a fresh directory named from `prefix` (mkdtemp makes it 0700:
 * no other user can reach the socket inside), a random token, and `remove` for the directory.
 */
export function privateRelay(prefix: string, file: string): RelayTarget & { remove(): void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  return {
    socketPath: path.join(dir, file),
    token: randomBytes(24).toString('base64url'),
    remove: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}
