/**
 * Where a worker thread's module is, and the first lines that load it, so one worker runs from the
 * build and from the sources alike. From the build it is `NAME.js` beside the file starting it;
 * from the sources (tsx, the tests) it is `NAME.ts`, which the worker loads through tsx's loader,
 * registered in it first: a worker does not inherit the loader of the thread that starts it.
 */
import { pathToFileURL } from 'node:url';

/** A worker's module and, from the sources, the loader to register before it. */
export interface WorkerEntry {
  entry: string;
  loader: string | null;
}

/**
 * The environment variable naming a build of the sources (laid out as dist/) that threads started
 * from the sources load instead: the tests set it to the build they make once per run, since
 * through tsx every thread pays for a loader thread of its own.
 */
export const THREAD_BUILD_VARIABLE = 'DEPLOY_WATCHDOG_THREAD_BUILD';

/** The folder of the sources (or of the build) this file is in. */
const SOURCES = new URL('../', import.meta.url);

/** The module `name` (no extension) beside `base` (the starting file's `import.meta.url`). */
export function workerEntry(name: string, base: string): WorkerEntry {
  const fromSource = base.endsWith('.ts');
  const entry = new URL(`./${name}.${fromSource ? 'ts' : 'js'}`, base).href;
  if (!fromSource) return { entry, loader: null };
  const build = process.env[THREAD_BUILD_VARIABLE];
  // Only a module of the sources has a copy in their build; any other (a test's own) keeps tsx.
  if (build && entry.startsWith(SOURCES.href)) {
    const inSources = entry.slice(SOURCES.href.length).replace(/\.ts$/, '.js');
    return { entry: new URL(inSources, pathToFileURL(`${build}/`)).href, loader: null };
  }
  return { entry, loader: import.meta.resolve('tsx/esm/api') };
}

/**
 * A worker's first lines (CommonJS, evaluated, with `workerData.boot` a {@link WorkerEntry}):
 * register the loader if asked, then import the entry; if that fails, run `onFailure` (JavaScript
 * with `message`, the error's, in scope) so the starting thread hears why rather than waits.
 */
export function workerBoot(onFailure: string): string {
  return `
const { workerData, parentPort } = require('node:worker_threads');
const { entry, loader } = workerData.boot;
(loader ? import(loader).then((m) => m.register()) : Promise.resolve())
  .then(() => import(entry))
  .catch((err) => {
    const message = String(err && err.message);
    ${onFailure}
  });
`;
}
