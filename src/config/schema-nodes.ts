/** A node of a JSON Schema. */
export type SchemaNode = Record<string, unknown>;

/** True for a JSON object (a schema node, a mapping of a document). */
export function isNode(value: unknown): value is SchemaNode {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The JSON Schema nodes that describe the value at `at` in the document `raw`: following
 * properties and items, through every `anyOf`/`oneOf` alternative, and into the kind a value names
 * where kinds are told apart by `if`/`then` (a channel's `type`, a policy's `action`; every kind
 * when the value names none). "Did you mean" reads the keys there; a stand-in for an unset variable
 * reads the value's type there.
 */
export function schemaNodesAt(schema: SchemaNode, at: readonly PropertyKey[], raw: unknown): SchemaNode[] {
  let nodes = [schema];
  let value = raw;
  for (const seg of at) {
    const here = nodes.flatMap((n) => alternatives(n, value));
    value = isNode(value) || Array.isArray(value) ? (value as Record<string, unknown>)[String(seg)] : undefined;
    nodes = here.flatMap((n) => {
      const child = typeof seg === 'number' ? n.items : isNode(n.properties) ? n.properties[String(seg)] : undefined;
      return isNode(child) ? [child] : [];
    });
  }
  return nodes.flatMap((n) => alternatives(n, value));
}

/** What `node` may stand for when its value is `value`: its alternatives, or itself and the kinds `value` fits. */
function alternatives(node: SchemaNode, value: unknown): SchemaNode[] {
  const alts = node.anyOf ?? node.oneOf;
  if (Array.isArray(alts)) return (alts as SchemaNode[]).flatMap((a) => alternatives(a, value));
  const kinds = Array.isArray(node.allOf) ? (node.allOf as SchemaNode[]) : [];
  return [node, ...kinds.flatMap((k) => (isNode(k.then) && fits(k.if, value) ? alternatives(k.then, value) : []))];
}

/** Whether `value` may be of the kind an `if` names: its discriminator is the kind's, or not given. */
function fits(condition: unknown, value: unknown): boolean {
  if (!isNode(condition) || !isNode(condition.properties)) return true;
  return Object.entries(condition.properties).every(([key, s]) => {
    const given = isNode(value) ? value[key] : undefined;
    return given === undefined || !isNode(s) || !('const' in s) || given === s.const;
  });
}
