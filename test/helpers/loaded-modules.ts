import { execFileSync } from 'node:child_process';

/**
 * The CommonJS files that importing `moduleUrl` loads, in a node process of its own (a test file's
 * own module graph has loaded whatever its other tests needed). Paths as node resolved them.
 */
export function modulesLoadedBy(moduleUrl: URL): string[] {
  const out = execFileSync(
    process.execPath,
    [
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      `import { createRequire } from 'node:module';
       await import(${JSON.stringify(moduleUrl.href)});
       console.log(JSON.stringify(Object.keys(createRequire(import.meta.url).cache)));`,
    ],
    { encoding: 'utf8' },
  );
  return JSON.parse(out.trim().split('\n').at(-1)!) as string[];
}
