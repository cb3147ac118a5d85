import { z } from 'zod';
import type { RouteContract } from './contract.js';
import { ErrorEnvelope } from './common.js';

type Json = Record<string, unknown>;

const schema = (s: z.ZodType, io: 'input' | 'output'): Json => {
  try {
    const { $schema: _drop, ...rest } = z.toJSONSchema(s, { io, unrepresentable: 'any' }) as Json;
    return rest;
  } catch {
    return {};
  }
};

/** Turns an object schema into OpenAPI parameters (path or query). */
function parameters(s: z.ZodType | undefined, where: 'path' | 'query'): Json[] {
  if (!s) return [];
  const js = schema(s, 'input') as { properties?: Record<string, Json>; required?: string[] };
  return Object.entries(js.properties ?? {}).map(([name, p]) => ({
    name,
    in: where,
    required: where === 'path' || (js.required ?? []).includes(name),
    schema: p,
  }));
}

/**
 * Builds the OpenAPI 3.1 document from the same route contracts the daemon validates with and
 * the client calls through: the contract is the only source of truth.
 */
export function openApiDocument(routes: RouteContract[], info: { version: string }): Json {
  const paths: Record<string, Record<string, Json>> = {};
  for (const r of routes) {
    const op: Json = {
      operationId: r.id,
      summary: r.summary,
      security: r.auth === 'none' ? [] : [{ bearer: [] }],
      parameters: [...parameters(r.params, 'path'), ...parameters(r.query, 'query')],
      responses: {
        [String(r.status)]: {
          description: r.summary,
          content: { [r.media?.response ?? 'application/json']: { schema: schema(r.response, 'output') } },
        },
        default: { description: 'error envelope', content: { 'application/json': { schema: schema(ErrorEnvelope, 'output') } } },
      },
      'x-auth': r.auth,
    };
    if (r.listener === 'sandbox') {
      // Not on the public address: only workloads reach it, at SANDBOX_URL (`platform daemon status`).
      op['x-listener'] = 'sandbox';
      op.servers = [{ url: 'http://127.0.0.1:{port}', description: 'the sandbox listener (SANDBOX_URL); no authentication, loopback only', variables: { port: { default: '0', description: 'sandbox_url in daemon.json' } } }];
    }
    if (r.body) op.requestBody = { required: true, content: { [r.media?.request ?? 'application/json']: { schema: schema(r.body, 'input') } } };
    (paths[r.path] ??= {})[r.method.toLowerCase()] = op;
  }
  return {
    openapi: '3.1.0',
    info: { title: 'platform API', version: info.version },
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
    paths,
  };
}
