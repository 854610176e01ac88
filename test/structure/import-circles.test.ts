/**
 * No import circle in `src/` (issue 26): every arrow between files points one way, type-only
 * imports included, since a circle of types is a circle a newcomer has to hold in their head all
 * the same. What `farm-studio look` counts, kept here so that a change that closes a circle fails
 * the suite instead of waiting for someone to draw the house.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve(import.meta.dirname, '../../src');

/** Every `.ts` file under `dir`. */
function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    return e.isDirectory() ? sourceFiles(full) : e.name.endsWith('.ts') ? [full] : [];
  });
}

/** `import … from './x.js'`, `import type …`, `export … from`, over several lines too: relative specifiers only. */
const STATIC_IMPORT = /^\s*(?:import|export)\s[^'";]*?\bfrom\s+['"](\.{1,2}\/[^'"]+)['"]/gm;

/** The files of `src/` that `file` imports, as paths. */
function importsOf(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  return [...text.matchAll(STATIC_IMPORT)].map((m) => {
    const target = path.resolve(path.dirname(file), m[1]!.replace(/\.js$/, '.ts'));
    return fs.existsSync(target) ? target : path.join(target.replace(/\.ts$/, ''), 'index.ts');
  });
}

/** The strongly connected components of more than one file (Tarjan), each as paths from `src/`. */
function circles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    for (let w = stack.pop()!; ; w = stack.pop()!) {
      onStack.delete(w);
      component.push(path.relative(SRC, w));
      if (w === v) break;
    }
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe('the imports of src/', () => {
  const graph = new Map(sourceFiles(SRC).map((f) => [f, importsOf(f)]));

  it('are read: every relative import names a file of src/', () => {
    const missing = [...graph].flatMap(([f, targets]) =>
      targets.filter((t) => !graph.has(t)).map((t) => `${path.relative(SRC, f)} -> ${path.relative(SRC, t)}`),
    );
    expect(missing).toEqual([]);
    // Enough arrows that a broken pattern, reading none, cannot pass the test below by itself.
    expect([...graph.values()].flat().length).toBeGreaterThan(1_000);
  });

  it('close no circle, type-only imports included', () => {
    expect(circles(graph)).toEqual([]);
  });

  it('are found circling when they do (the check itself)', () => {
    const a = path.join(SRC, 'a.ts');
    const b = path.join(SRC, 'b.ts');
    const c = path.join(SRC, 'c.ts');
    expect(
      circles(
        new Map([
          [a, [b]],
          [b, [a, c]],
          [c, []],
        ]),
      ),
    ).toEqual([['a.ts', 'b.ts']]);
  });
});
