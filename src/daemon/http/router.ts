import type { IncomingMessage, ServerResponse } from 'node:http';
import type { z } from 'zod';
import { DEFAULT_BODY_LIMIT, type HttpMethod, type RouteContract } from '../../api/contract.js';
import type { Principal } from '../services/auth/principal.js';
import { ApiError, MANAGEMENT_AUTH_REQUIRED, badRequest, forbidden, notFound, unauthorized } from './errors.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
import { readJsonBody } from './body.js';
import { parseInput } from './validate.js';

/** Per-request context given to every handler; the raw req and res stay in routes.ts. */
export interface RequestContext {
  requestId: string;
  ip: string;
  principal?: Principal;
  req: IncomingMessage;
  res: ServerResponse;
}

export interface HandlerInput<C extends RouteContract> extends RequestContext {
  params: C extends { params: infer S extends z.ZodType } ? z.output<S> : Record<string, string>;
  query: C extends { query: infer S extends z.ZodType } ? z.output<S> : Record<string, string>;
  body: C extends { body: infer S extends z.ZodType } ? z.output<S> : undefined;
}

/** A handler result: the body (sent with the contract's status) or an explicit reply. */
export class Reply {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly headers: Record<string, string> = {},
  ) {}
}
/** Marks a response the handler already wrote itself (streams, plain text). */
export const HANDLED = Symbol('handled');

type Handler<C extends RouteContract> = (input: HandlerInput<C>) => Promise<unknown> | unknown;

interface CompiledRoute {
  contract: RouteContract;
  regex: RegExp;
  names: string[];
  /** Literal characters in the pattern: more specific routes win when two match. */
  specificity: number;
  handler?: Handler<any>;
  raw?: (ctx: RequestContext, params: Record<string, string>) => Promise<void>;
  /** The area that registered the route: its requests wait for that area's start (startup.ts). */
  area?: string;
  /** The path's leading whole literal segments (at most INDEX_DEPTH): `/v1/agents/{name}` has `v1`, `agents`. */
  lead: string[];
}

/** How many leading path segments the route index keys on. */
const INDEX_DEPTH = 2;
/** Distinct (listener, leading segments) keys remembered; paths come from clients, so the memo is bounded. */
const INDEX_KEYS_MAX = 1024;

/** The literal segments a path starts with, up to INDEX_DEPTH: a segment holding a parameter ends them. */
function leadingSegments(path: string): string[] {
  const out: string[] = [];
  const segments = path.split('/').slice(1);
  for (let i = 0; i < segments.length && out.length < INDEX_DEPTH; i++) {
    const seg = segments[i]!;
    // A segment holding a parameter (`{name}`, `{topic}:publish`) can match many texts: the literal lead ends there.
    if (seg.includes('{')) break;
    out.push(seg);
  }
  return out;
}

/** Compiles `{name}` (one segment, no colon so `{topic}:publish` works) and `{name...}` (rest of path). */
function compile(path: string): { regex: RegExp; names: string[]; specificity: number; lead: string[] } {
  const names: string[] = [];
  let literal = 0;
  const source = path.replace(/\{(\w+)(\.\.\.)?\}|([^{]+)/g, (_m, name: string, rest: string, lit: string) => {
    if (lit !== undefined) {
      literal += lit.length;
      return lit.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    }
    names.push(name);
    return rest ? '(.+)' : '([^/:]+)';
  });
  return { regex: new RegExp(`^${source}$`), names, specificity: literal, lead: leadingSegments(path) };
}

export class Router {
  private readonly routes: CompiledRoute[] = [];
  /** `METHOD path` of every route, for the duplicate check. */
  private readonly keys = new Set<string>();
  /** False after an add: the table is sorted once, when first read, not after each of ~500 adds. */
  private sorted = true;
  /**
   * The routes that can match a path, by listener and the path's leading segments, in the same
   * (specificity) order as `routes`: a request tests a handful of regexes instead of every route's.
   * A route is a candidate when each of its leading literal segments equals the path's; its regex
   * still decides. Rebuilt lazily after a route is added.
   */
  private readonly candidates = new Map<string, CompiledRoute[]>();

  /**
   * Checks that the caller can see the project named by a `{projectID}` path parameter. Run before
   * body validation so a caller without a grant gets the same 404 on every project route,
   * whatever it sends (spec 1 §5, the 404-not-403 rule). Areas still enforce roles themselves.
   */
  projectGate?: (principal: Principal, projectRef: string) => void;

  /** The area whose routes are being registered now (set by the app around each area's register). */
  registering?: string;

  /** Registers a JSON route: the router validates params, query and body before calling the handler. */
  handle<C extends RouteContract>(contract: C, handler: Handler<C>): void {
    this.add({ contract, handler, area: this.registering, ...compile(contract.path) });
  }

  /** Registers a route whose handler reads and writes the raw request (multipart, streams). */
  raw(contract: RouteContract, handler: (ctx: RequestContext, params: Record<string, string>) => Promise<void>): void {
    this.add({ contract, raw: handler, area: this.registering, ...compile(contract.path) });
  }

  contracts(): RouteContract[] {
    return this.table().map((r) => r.contract);
  }

  private add(r: CompiledRoute): void {
    const key = `${r.contract.method} ${r.contract.path}`;
    if (this.keys.has(key)) throw new Error(`duplicate route ${key}`);
    this.keys.add(key);
    this.routes.push(r);
    this.sorted = false;
    this.candidates.clear();
  }

  /** Most specific first; a stable sort keeps registration order between equals, as sorting after each add did. */
  private table(): CompiledRoute[] {
    if (!this.sorted) {
      this.routes.sort((a, b) => b.specificity - a.specificity);
      this.sorted = true;
    }
    return this.routes;
  }

  /** The routes of this listener whose leading literal segments the path shares, in match order. */
  private candidatesFor(pathname: string, listener: Listener): CompiledRoute[] {
    const segments = pathname.split('/', INDEX_DEPTH + 1).slice(1);
    const key = `${listener} ${segments.join('/')}`;
    let list = this.candidates.get(key);
    if (list) return list;
    list = this.table().filter((r) => servedOn(r, listener) && r.lead.every((seg, i) => segments[i] === seg));
    if (this.candidates.size >= INDEX_KEYS_MAX) this.candidates.clear();
    this.candidates.set(key, list);
    return list;
  }

  /** Methods some route serves at this path (for a 405 to a method Node's parser cannot even read). */
  allowedMethods(pathname: string, listener: Listener = 'main'): string[] {
    return [...new Set(this.candidatesFor(pathname, listener).filter((r) => r.regex.test(pathname)).map((r) => r.contract.method))];
  }

  /**
   * Finds the route for a request. A path that matches under another method gives 405 and a path
   * that matches nothing gives 404, both in the envelope (spec 1 §7).
   */
  match(method: string, pathname: string, listener: Listener = 'main'): { route: CompiledRoute; params: Record<string, string> } {
    let allowed: string[] = [];
    for (const r of this.candidatesFor(pathname, listener)) {
      const m = r.regex.exec(pathname);
      if (!m) continue;
      if (r.contract.method !== method && !(method === 'HEAD' && r.contract.method === 'GET')) {
        allowed.push(r.contract.method);
        continue;
      }
      const params: Record<string, string> = {};
      r.names.forEach((n, i) => {
        try {
          params[n] = decodeURIComponent(m[i + 1]!);
        } catch {
          params[n] = m[i + 1]!;
        }
      });
      return { route: r, params };
    }
    if (allowed.length) {
      allowed = [...new Set(allowed)];
      throw new ApiError(405, `method ${method} not allowed on ${pathname}; allowed: ${allowed.join(', ')}`, {
        Allow: allowed.join(', '),
      });
    }
    throw new ApiError(404, `no route for ${method} ${pathname}`);
  }

  /** Runs the matched route: auth gate, first-login gate, input validation, handler, response. */
  async run(route: CompiledRoute, rawParams: Record<string, string>, ctx: RequestContext, url: URL): Promise<void> {
    const c = route.contract;
    gate(c, ctx.principal);
    // The project gate runs before the person and platform-admin gates: a machine credential or a
    // plain user with no grant on the project gets 404 there too, never 403 (spec 1 §5).
    if (c.projectIdRule && rawParams.projectID !== undefined && !UUID.test(rawParams.projectID)) {
      throw c.projectIdRule === 'uuid-400' ? badRequest('malformed project id: project id must be a UUID') : notFound('project not found');
    }
    if (c.auth !== 'none' && this.projectGate) {
      const ref = rawParams.projectID ?? (takesProjectQuery(c) ? (url.searchParams.get('project') ?? undefined) : undefined);
      if (ref !== undefined) this.projectGate(ctx.principal!, ref);
    }
    roleGate(c, ctx.principal!);
    if (route.raw) return route.raw(ctx, rawParams);
    const params = c.params ? parseInput(c.params, rawParams, 'path') : rawParams;
    const query = c.query ? parseInput(c.query, Object.fromEntries(url.searchParams), 'query') : Object.fromEntries(url.searchParams);
    let body: unknown;
    if (c.body) body = parseInput(c.body, await readJsonBody(ctx.req, c.bodyLimit ?? DEFAULT_BODY_LIMIT), 'body');
    const result = await route.handler!({ ...ctx, params, query, body } as HandlerInput<RouteContract>);
    if (result === HANDLED) return;
    const reply = result instanceof Reply ? result : new Reply(c.status, result);
    sendJson(ctx.res, reply.status, reply.body, reply.headers);
  }
}

/** Which listener a request arrived on: each serves only its own routes. */
export type Listener = 'main' | 'sandbox';
const servedOn = (r: CompiledRoute, listener: Listener) => (r.contract.listener ?? 'main') === listener;

/** Routes that name their project as `?project=` (agents) are gated like `{projectID}` ones. */
function takesProjectQuery(c: RouteContract): boolean {
  const shape = (c.query as { shape?: Record<string, unknown> } | undefined)?.shape;
  return shape !== undefined && 'project' in shape;
}

/** Route-level authentication: spec 1 §5 (401 message, first-login gate). */
function gate(c: RouteContract, p: Principal | undefined): void {
  if (c.auth === 'none') return;
  if (!p) throw unauthorized(MANAGEMENT_AUTH_REQUIRED);
  if (p.kind === 'user' && p.mustChangePassword && !c.allowBeforePasswordChange) {
    throw forbidden('password change required: change your password via POST /v1/auth/change-password first');
  }
}

/** Who may use the route once authenticated: persons only, or platform admins only. */
function roleGate(c: RouteContract, p: Principal): void {
  if (c.auth === 'none') return;
  if ((c.auth === 'person' || c.auth === 'platform-admin') && p.kind !== 'user') {
    throw forbidden('this route acts for a person; machine credentials (service-account and workload keys) cannot use it');
  }
  if (c.auth === 'platform-admin' && p.kind === 'user' && p.platformRole !== 'admin') {
    throw forbidden('this action requires the platform admin role');
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = body === undefined ? '' : JSON.stringify(body);
  res.statusCode = status;
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  if (status === 204 || body === undefined) {
    res.end();
    return;
  }
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

export type { HttpMethod };
