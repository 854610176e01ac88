/**
 * The daemon's build, defined once: `npm run build` (and so `npm ci`'s `prepare`, the Dockerfile)
 * runs this file, and the cycle benchmark bundles its worker with {@link bundle} so that it
 * measures what ships.
 *
 * Each entry (the command line and every worker thread's module) is one minified ESM bundle at the
 * place a file-per-module build would put it: `dist/cli/bin.js`, `dist/state/postgres-worker.js`…
 * Names are kept (`keepNames`) so stack traces and logs still say which function; a source map is
 * written beside each bundle but not enabled (docs/operations.md, "Stack traces").
 *
 * Inside a bundle, every source module's `import.meta.url` is the URL its own file would have in
 * that layout ({@link keepModuleUrls}): what the sources find relative to themselves (the templates,
 * the simulator's package, a thread's module beside the file starting it) is found as before.
 *
 * Pure JavaScript libraries are bundled in and tree-shaken ({@link BUNDLED}); the others stay in
 * node_modules: native ones (better-sqlite3), those loaded by path or on first use
 * (`src/lib/undici-core.ts`, `src/lib/prom-client-core.ts`, `src/lib/load-on-use.ts`) and those
 * that start threads of their own from their files (pino).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The repository's root. */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SRC = path.join(ROOT, 'src');

/**
 * The builds, each into one folder of the layout: the command line (`cli`: `bin.js` and each
 * command's file, which `src/cli/main.ts` imports by name, sharing chunks beside them) and each
 * worker thread's module, where the file starting it looks for it.
 */
export const BUILDS = [
  { dir: 'cli', entries: fs.readdirSync(path.join(SRC, 'cli')).filter((f) => f.endsWith('.ts')) },
  { dir: 'console', entries: ['console-worker.ts'] },
  { dir: 'interactions', entries: ['socket-mode-worker.ts'] },
  { dir: 'server', entries: ['front-door-worker.ts'] },
  { dir: 'state', entries: ['postgres-worker.ts'] },
];

/** The libraries bundled into the entries: pure JavaScript, loaded at start by every daemon. */
export const BUNDLED = ['zod', 'mustache', 'node-cron'];

/**
 * esbuild's options for `entryPoints` (paths) bundled into `outdir`, shared chunks beside them,
 * in a layout rooted at `distRoot`.
 */
export function bundleOptions(entryPoints, outdir, distRoot) {
  return {
    entryPoints,
    outdir,
    entryNames: '[name]',
    chunkNames: 'chunk-[hash]',
    bundle: true,
    splitting: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    minify: true,
    keepNames: true,
    legalComments: 'none',
    charset: 'utf8',
    sourcemap: 'linked',
    sourcesContent: false,
    logLevel: 'error',
    plugins: [externalLibraries(), keepModuleUrls(outdir, distRoot)],
  };
}

/** Bundles `entryPoints` into `outdir` in a layout rooted at `distRoot` (see {@link bundleOptions}). */
export async function bundle(entryPoints, outdir, distRoot) {
  const esbuild = await import('esbuild');
  await esbuild.build(bundleOptions(entryPoints, outdir, distRoot));
}

/** Every package but {@link BUNDLED} stays external (`node:` builtins are external on this platform). */
function externalLibraries() {
  return {
    name: 'external-libraries',
    setup(build) {
      build.onResolve({ filter: /^[^./]/ }, (args) => {
        if (args.path.startsWith('node:')) return { path: args.path, external: true };
        const name = args.path.startsWith('@') ? args.path.split('/', 2).join('/') : args.path.split('/')[0];
        return BUNDLED.includes(name) ? undefined : { path: args.path, external: true };
      });
    },
  };
}

/**
 * Gives every module of src/ in a bundle the `import.meta.url` of its own file in a file-per-module
 * layout under `distRoot`: `src/notify/channels/template-config.ts` in `dist/cli/bin.js` sees
 * `…/dist/notify/channels/template-config.js`, computed from the bundle's own URL, so the build
 * can move as a whole.
 */
function keepModuleUrls(outdir, distRoot) {
  return {
    name: 'keep-module-urls',
    setup(build) {
      build.onLoad({ filter: /\.ts$/ }, async (args) => {
        const source = await fs.promises.readFile(args.path, 'utf8');
        if (!args.path.startsWith(SRC + path.sep) || !source.includes('import.meta.url')) return undefined;
        const own = path.join(distRoot, path.relative(SRC, args.path)).replace(/\.ts$/, '.js');
        const relative = path.relative(outdir, own).split(path.sep).join('/');
        const url = `new URL(${JSON.stringify(relative)}, import.meta.url).href`;
        return { contents: source.replaceAll('import.meta.url', url), loader: 'ts' };
      });
    },
  };
}

/** Builds dist/: each of {@link BUILDS}, the command line executable. */
export async function buildDist(distRoot = path.join(ROOT, 'dist')) {
  fs.rmSync(distRoot, { recursive: true, force: true });
  for (const { dir, entries } of BUILDS) {
    const outdir = path.join(distRoot, dir);
    await bundle(
      entries.map((f) => path.join(SRC, dir, f)),
      outdir,
      distRoot,
    );
  }
  fs.chmodSync(path.join(distRoot, 'cli', 'bin.js'), 0o755);
}

// `node scripts/build.mjs [DIR]`: into DIR (a folder one level below a copy of the root), dist/ by default.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href)
  await buildDist(process.argv[2] ? path.resolve(process.argv[2]) : undefined);
