import { isMap, isPair, isScalar, isSeq, type Document, type LineCounter, type Node } from 'yaml';

/** A key path as zod reports it. */
export type KeyPath = readonly PropertyKey[];

/**
 * A problem of the file found by a check that reads it as data (the schema, the references between
 * sections, the templates), located by its key path; its line is looked up from the path.
 */
export interface KeyPathProblem {
  path: KeyPath;
  message: string;
}

/**
 * Renders a key path the way an operator writes it: `notify.routes[1].channels[0]`. Keys that are
 * not plain words are quoted: `match["app.kubernetes.io"]`.
 */
export function formatKeyPath(path: KeyPath): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else if (typeof seg === 'string' && /^[A-Za-z_][A-Za-z0-9_]*$/.test(seg)) out += out ? `.${seg}` : seg;
    else out += `[${JSON.stringify(String(seg))}]`;
  }
  return out;
}

/**
 * The 1-based line of the node at `path` in a parsed YAML document; for a path that does not exist
 * (a missing required key), the line of the deepest part that does, so the operator is sent to the
 * right block. Undefined when the document has no content.
 */
export function lineOfPath(doc: Document, lines: LineCounter, path: KeyPath): number | undefined {
  let node: unknown = doc.contents;
  let best = startLine(node, lines);
  for (const seg of path) {
    if (isMap(node)) {
      const pair = node.items.find((p) => isPair(p) && keyText(p.key) === String(seg));
      if (!pair) break;
      // The key's own line: a value may start on a later line (a nested block).
      best = startLine(pair.key, lines) ?? best;
      node = pair.value;
      if (node === null || node === undefined) break;
    } else if (isSeq(node) && typeof seg === 'number') {
      const item = node.items[seg];
      if (item === undefined || item === null) break;
      node = item;
      best = startLine(node, lines) ?? best;
    } else {
      break;
    }
  }
  return best;
}

function keyText(key: unknown): string | undefined {
  if (isScalar(key)) return String(key.value);
  return typeof key === 'string' ? key : undefined;
}

function startLine(node: unknown, lines: LineCounter): number | undefined {
  const range = (node as Node | null | undefined)?.range;
  return range ? lines.linePos(range[0]).line : undefined;
}
