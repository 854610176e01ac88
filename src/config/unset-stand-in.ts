import { configJsonSchema, REFERENCE_INSIDE } from './config-json-schema.js';
import { schemaNodesAt, type SchemaNode } from './schema-nodes.js';

/** A URL that names no host anyone can reach (`.invalid` is reserved for that, RFC 6761). */
const STAND_IN_URL = 'https://unset.invalid';
/** An address at a domain reserved for examples (RFC 2606). */
const STAND_IN_EMAIL = 'unset@example.com';

/**
 * A value the configuration schema takes at `at` of the document `raw`, to stand in for a value
 * whose `${VAR}` is not set (`reference`, its text), so that the rest of the file is checked as
 * it would be with the variable set: the key's default when it has one, else the least value of
 * its type (the smallest number it allows, false, the first of its words, the schema's example, a
 * URL or an address that reaches nobody), else the reference itself (any text a plain string takes). Never used to run:
 * only `validate` and the commands that need no secrets read a configuration with stand-ins.
 */
export function unsetStandIn(at: readonly PropertyKey[], raw: unknown, reference: string): unknown {
  const nodes = schemaNodesAt(configJsonSchema(), at, raw);
  const withDefault = nodes.find((n) => 'default' in n);
  if (withDefault) return withDefault.default;
  for (const node of nodes) {
    const value = leastValue(node, reference);
    if (value !== undefined) return value;
  }
  return reference;
}

/** The least value one alternative takes; undefined for a word, a kind or the `${VAR}` alternative. */
function leastValue(node: SchemaNode, reference: string): unknown {
  if ('const' in node || node.pattern === REFERENCE_INSIDE) return undefined;
  // A value whose kind the schema cannot say (a postgres:// URL) is shown by an example of it.
  if (Array.isArray(node.examples) && node.examples.length > 0) return node.examples[0];
  if (Array.isArray(node.enum)) return node.enum[0];
  const types = [node.type].flat();
  if (types.includes('integer') || types.includes('number')) {
    if (typeof node.minimum === 'number') return node.minimum;
    return typeof node.exclusiveMinimum === 'number' ? node.exclusiveMinimum + 1 : 1;
  }
  if (types.includes('boolean')) return false;
  if (!types.includes('string')) return undefined;
  if (node.format === 'uri') return STAND_IN_URL;
  if (node.format === 'email') return STAND_IN_EMAIL;
  return node.pattern === undefined ? reference : undefined;
}
