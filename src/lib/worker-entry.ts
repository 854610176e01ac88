/**
 * Where a worker thread's module is, and the first lines that load it, so one worker runs from the
 * build and from the sources alike. From the build it is `NAME.js` beside the file starting it;
 * from the sources (tsx, the tests) it is `NAME.ts`, which the worker loads through tsx's loader,
 * registered in it first: a worker does not inherit the loader of the thread that starts it.
 */

/** A worker's module and, from the sources, the loader to register before it. */
export interface WorkerEntry {
  entry: string;
  loader: string | null;
}

/** The module `name` (no extension) beside `base` (the starting file's `import.meta.url`). */
export function workerEntry(name: string, base: string): WorkerEntry {
  const fromSource = base.endsWith('.ts');
  const entry = new URL(`./${name}.${fromSource ? 'ts' : 'js'}`, base).href;
  if (!fromSource) return { entry, loader: null };
  return { entry, loader: import.meta.resolve('tsx/esm/api') };
}

/**
 * A worker's first lines (CommonJS, evaluated, with `workerData.boot` a {@link WorkerEntry}):
 * register the loader if asked, then import the entry; if that fails, run `onFailure` (JavaScript
 * with `message` in scope) so the starting thread hears why rather than waits.
 */
export function workerBoot(onFailure: string): string {
  return `
const { workerData, parentPort } = require('node:worker_threads');
const { entry, loader } = workerData.boot;
(loader ? import(loader).then((m) => m.register()) : Promise.resolve())
  .then(() => import(entry))
  .catch((err) => {
    const message = 'the worker thread could not start: ' + (err && err.message);
    ${onFailure}
  });
`;
}
