import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { reportFailure, table } from '../../src/cli/cli-helpers.js';
import { UsageError } from '../../src/cli/command.js';

describe('listing helpers', () => {
  it('aligns columns two spaces apart and leaves the last one unpadded', () => {
    expect(
      table([
        ['ID', 'STATE', 'REASON'],
        ['a1', 'active', 'deploy'],
        ['b', 'expired', 'x'],
      ]),
    ).toBe(['ID  STATE    REASON', 'a1  active   deploy', 'b   expired  x', ''].join('\n'));
  });
});

describe('reportFailure (how every command reports a bad command line)', () => {
  const io = () => {
    let stderr = '';
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        stderr += chunk.toString();
        done();
      },
    });
    return { io: { stdout: sink, stderr: sink, env: {}, signal: new AbortController().signal }, stderr: () => stderr };
  };

  it('prints the message, then the usage, and answers exit code 2', () => {
    const t = io();
    expect(reportFailure(t.io, 'usage: deploy-watchdog x', new UsageError('missing --config FILE'))).toBe(2);
    expect(t.stderr()).toBe('error: missing --config FILE\n\nusage: deploy-watchdog x\n');
  });

  it('throws on what is not a usage error, printing nothing', () => {
    const t = io();
    expect(() => reportFailure(t.io, 'usage', new Error('disk on fire'))).toThrow('disk on fire');
    expect(t.stderr()).toBe('');
  });
});
