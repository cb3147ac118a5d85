import { z } from 'zod';
import type { RouteContract } from './contract.js';
import { ErrorEnvelope } from './common.js';
import { builtSchema } from './lazy.js';

type Json = Record<string, unknown>;

/**
 * What zod's conversion has seen, keyed by the built schema: the contract's schemas are built on
 * first use (lazy.ts) and reached both through their stand-ins and, from zod's own methods, as
 * themselves; zod's processors look a schema up as itself.
 */
class SeenByBuiltSchema<V> extends Map<z.core.$ZodType, V> {
  override get(key: z.core.$ZodType) {
    return super.get(builtSchema(key));
  }
  override set(key: z.core.$ZodType, value: V) {
    return super.set(builtSchema(key), value);
  }
  override has(key: z.core.$ZodType) {
    return super.has(builtSchema(key));
  }
}

/** z.toJSONSchema of one schema (the same steps, zod's own), over stand-ins. */
function toJsonSchema(s: z.ZodType, io: 'input' | 'output'): Json {
  // Every classic schema converts itself (its own processJSONSchema): no processor table needed.
  const ctx = z.core.initializeContext({ io, unrepresentable: 'any', processors: {} });
  ctx.seen = new SeenByBuiltSchema();
  const root = builtSchema(s);
  z.core.process(root, ctx);
  z.core.extractDefs(ctx, root);
  return z.core.finalize(ctx, root) as Json;
}

const schema = (s: z.ZodType, io: 'input' | 'output'): Json => {
  try {
    const { $schema: _drop, ...rest } = toJsonSchema(s, io);
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
