import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { THREAD_BUILD_VARIABLE, workerBoot, workerEntry, type WorkerEntry } from '../../src/lib/worker-entry.js';
import { TEST_BUILD_DIR } from '../helpers/test-build.js';

/** Starts `boot` as the daemon starts its threads, and waits for its first message (or its failure). */
async function firstMessage(boot: WorkerEntry): Promise<string> {
  const worker = new Worker(workerBoot('parentPort.postMessage("failed: " + message);'), {
    eval: true,
    workerData: { boot },
  });
  try {
    return await new Promise<string>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
  } finally {
    await worker.terminate();
  }
}

describe('workerEntry', () => {
  const set = process.env[THREAD_BUILD_VARIABLE];
  afterEach(() => {
    if (set === undefined) delete process.env[THREAD_BUILD_VARIABLE];
    else process.env[THREAD_BUILD_VARIABLE] = set;
  });

  it('from the build: the JavaScript beside the starting file, with no loader', () => {
    expect(workerEntry('postgres-worker', 'file:///opt/dw/dist/state/postgres-channel.js')).toEqual({
      entry: 'file:///opt/dw/dist/state/postgres-worker.js',
      loader: null,
    });
  });

  it.each([
    ['no build named', undefined],
    ['a build named, which has no copy of a module outside src/', TEST_BUILD_DIR],
  ])('from the sources, %s: the TypeScript beside it, loaded through tsx, which really starts', async (_, build) => {
    if (build === undefined) delete process.env[THREAD_BUILD_VARIABLE];
    else process.env[THREAD_BUILD_VARIABLE] = build;
    const boot = workerEntry('fixtures/hello-worker', import.meta.url);
    expect(boot.entry).toMatch(/\/test\/lib\/fixtures\/hello-worker\.ts$/);
    expect(boot.loader).toMatch(/tsx/);
    expect(await firstMessage(boot)).toBe(boot.entry);
  });

  it("from the sources with a build named: the build's copy, with no loader", () => {
    process.env[THREAD_BUILD_VARIABLE] = TEST_BUILD_DIR;
    const base = new URL('../../src/state/postgres-channel.ts', import.meta.url).href;
    const boot = workerEntry('postgres-worker', base);
    expect(boot.loader).toBeNull();
    expect(fileURLToPath(boot.entry)).toBe(`${TEST_BUILD_DIR}/state/postgres-worker.js`);
    expect(fs.existsSync(fileURLToPath(boot.entry))).toBe(true);
  });
});
