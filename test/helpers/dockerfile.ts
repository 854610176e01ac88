/**
 * What the Dockerfile's runtime stage says, read as Docker reads it, for the tests that check the
 * image and the files that run it (compose, Kubernetes) against one another.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

const DOCKERFILE = path.resolve(import.meta.dirname, '../../Dockerfile');

/**
 * The JSON arguments of the Dockerfile's instruction `name` (its last, as Docker takes it): the
 * command of ENTRYPOINT or CMD, the command after HEALTHCHECK's options.
 */
export function dockerfileInstruction(name: 'ENTRYPOINT' | 'CMD' | 'HEALTHCHECK'): string[] {
  const text = readFileSync(DOCKERFILE, 'utf8').replace(/\\\n/g, ' ');
  const lines = text.split('\n').filter((l) => l.startsWith(`${name} `));
  const json = name === 'HEALTHCHECK' ? lines.at(-1)!.replace(/^.* CMD /, '') : lines.at(-1)!.slice(name.length);
  return JSON.parse(json) as string[];
}

/** The runtime stage's `ENV name=value …` lines together (no quoting: what this Dockerfile uses). */
export function dockerfileEnv(): Record<string, string> {
  const text = readFileSync(DOCKERFILE, 'utf8');
  const runtime = text.slice(text.lastIndexOf('\nFROM '));
  return Object.fromEntries(
    runtime
      .split('\n')
      .filter((l) => l.startsWith('ENV '))
      .flatMap((l) => l.slice('ENV '.length).trim().split(/\s+/))
      .map((pair) => pair.split('=', 2) as [string, string]),
  );
}
