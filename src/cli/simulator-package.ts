/**
 * The commands that live in the simulator's own package (`packages/simulator`): `simulator` and
 * `demo`. They come with a clone of the repository, never with the production build or image. From
 * a clone they are loaded from their TypeScript sources, through tsx (a development dependency)
 * when this file runs from the build; where the package is absent, the command says where to get it.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { EXIT, type Command } from './command.js';

/** The commands the package gives. */
export type SimulatorPackageCommand = 'simulator' | 'demo';

/** Where the repository keeps a clone's copy of the package. */
const PACKAGE_ROOT = new URL('../../packages/simulator/', import.meta.url);

/** Loads `name` from the package, or a command that explains why it cannot run here. */
export async function simulatorPackageCommand(name: SimulatorPackageCommand): Promise<{ default: Command }> {
  const file = fileURLToPath(new URL(`src/cli/${name}-command.ts`, PACKAGE_ROOT));
  if (!existsSync(file))
    return { default: absent(name, 'this installation has no simulator package (packages/simulator)') };
  // From the build, plain Node cannot load TypeScript: tsx's loader is registered first. From the
  // sources (tsx, the tests) it already is.
  if (!import.meta.url.endsWith('.ts')) {
    try {
      const api = (await import(import.meta.resolve('tsx/esm/api'))) as { register: () => unknown };
      api.register();
    } catch {
      return { default: absent(name, 'the development dependencies are not installed (tsx)') };
    }
  }
  return (await import(pathToFileURL(file).href)) as { default: Command };
}

/** A stand-in for a command the package would give, saying what to do instead. */
function absent(name: SimulatorPackageCommand, why: string): Command {
  return {
    usage: `usage: deploy-watchdog ${name} (from a clone of the repository)`,
    run(_argv, io) {
      io.stderr.write(
        `deploy-watchdog ${name} comes with a clone of the repository, not with this build: ${why}.\n` +
          `From a clone: npm ci && npx deploy-watchdog ${name}\n`,
      );
      return Promise.resolve(EXIT.usage);
    },
  };
}
