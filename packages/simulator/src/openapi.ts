/**
 * The OpenAPI 3.1 document of the API, built from the function catalogue and the zod answer
 * schemas, so it can never disagree with what the client parses or the simulator answers.
 */
import { z } from 'zod';
import { FUNCTION_LIST, errorsOf, type ParamSpec } from '../../../src/api/functions.js';
import { ERROR_STATUS, errorEnvelopeSchema } from '../../../src/api/schemas.js';

function paramSchema(spec: ParamSpec): Record<string, unknown> {
  if (spec.type === 'enum') return { type: 'string', enum: [...spec.values] };
  return { type: spec.type };
}

function jsonSchema(schema: z.ZodTypeAny): Record<string, unknown> {
  const out = z.toJSONSchema(schema, { unrepresentable: 'any' }) as Record<string, unknown>;
  delete out.$schema;
  return out;
}

/** Builds the OpenAPI document for a service at `serverUrl` (the API root, ending in /api/v1). */
export function buildOpenApi(serverUrl: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const spec of FUNCTION_LIST) {
    const parameters: Record<string, unknown>[] = [];
    if (spec.path.includes('{id}'))
      parameters.push({ name: 'id', in: 'path', required: true, schema: { type: 'integer' } });
    for (const [name, p] of Object.entries(spec.query))
      parameters.push({ name, in: 'query', required: p.required === true, schema: paramSchema(p) });
    if (spec.kind === 'change')
      parameters.push({ name: 'Idempotency-Key', in: 'header', required: true, schema: { type: 'string' } });
    const responses: Record<string, unknown> = {
      '200': {
        description: 'Success',
        content: {
          'application/json': {
            schema: { type: 'object', properties: { data: jsonSchema(spec.answer) }, required: ['data'] },
          },
        },
      },
    };
    const byStatus = new Map<number, string[]>();
    for (const code of errorsOf(spec))
      byStatus.set(ERROR_STATUS[code], [...(byStatus.get(ERROR_STATUS[code]) ?? []), code]);
    for (const [status, codes] of [...byStatus].sort((a, b) => a[0] - b[0])) {
      responses[String(status)] = {
        description: `Error: ${codes.join(', ')}`,
        content: { 'application/json': { schema: { ...jsonSchema(errorEnvelopeSchema), 'x-error-codes': codes } } },
      };
    }
    const operation: Record<string, unknown> = {
      operationId: spec.tool,
      summary: spec.summary,
      'x-function': spec.name,
      'x-permission': spec.permission,
      'x-error-codes': errorsOf(spec),
      parameters,
      responses,
    };
    if (spec.kind === 'change') {
      const properties = Object.fromEntries(Object.entries(spec.body).map(([name, p]) => [name, paramSchema(p)]));
      const required = Object.entries(spec.body)
        .filter(([, p]) => p.required)
        .map(([name]) => name);
      operation.requestBody = {
        required: required.length > 0,
        content: {
          'application/json': { schema: { type: 'object', properties, required, additionalProperties: false } },
        },
      };
    }
    const path = `/api/v1${spec.path}`;
    paths[path] = { ...(paths[path] ?? {}), [spec.method.toLowerCase()]: operation };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Deployment Management Service API',
      version: 'v1',
      description: 'Served by the deploy-watchdog simulator.',
    },
    servers: [{ url: serverUrl.replace(/\/api\/v1$/, '') }],
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
    security: [{ bearer: [] }],
    paths,
  };
}
