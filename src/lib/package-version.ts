import fs from 'node:fs';

/**
 * The version in package.json, the one place it is written: `--version` prints it and
 * `deploy_watchdog_build_info` carries it. Read beside the code, two folders up from this module in
 * the sources (`src/lib/`) and in the build (`dist/lib/`) alike; the image copies package.json there.
 */
export function packageVersion(): string {
  const manifest = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version?: unknown;
  };
  if (typeof manifest.version !== 'string') throw new Error('package.json has no version');
  return manifest.version;
}
