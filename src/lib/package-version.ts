import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package whose version this is (a bundle's folder may hold another package.json above it). */
const PACKAGE_NAME = 'deploy-watchdog';

/**
 * The version in package.json, the one place it is written: `--version` prints it and
 * `deploy_watchdog_build_info` carries it. Found by walking up from this module to the nearest
 * package.json of this package: two folders up in the sources (`src/lib/`) and the build
 * (`dist/lib/`), where the image copies it too, and further for a bundle (the benchmark's worker
 * in `node_modules/.cache/…`).
 */
export function packageVersion(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) {
      const manifest = JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: unknown; version?: unknown };
      if (manifest.name === PACKAGE_NAME) {
        if (typeof manifest.version !== 'string') throw new Error(`${file} has no version`);
        return manifest.version;
      }
    }
    const up = path.dirname(dir);
    if (up === dir) throw new Error(`no package.json of ${PACKAGE_NAME} above ${fileURLToPath(import.meta.url)}`);
    dir = up;
  }
}
