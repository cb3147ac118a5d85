import type { z } from 'zod';

/** Who may reach a route before any project-level check runs (spec 1 §4.1, §5). */
export type RouteAuth =
  | 'none' // no credential needed (health, invitation preview and accept, login)
  | 'any' // any valid credential: person, personal key, service-account key, workload key
  | 'person' // a signed-in person (session or personal key); machine credentials get 403
  | 'platform-admin'; // a person whose platform role is admin

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * One endpoint of the contract: the single source of truth for the daemon's validation,
 * the typed client and the OpenAPI document. Paths use the spec's `{param}` syntax;
 * `{param...}` matches the rest of the path.
 */
export interface RouteContract<
  P extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  B extends z.ZodType = z.ZodType,
  R extends z.ZodType = z.ZodType,
> {
  id: string;
  method: HttpMethod;
  path: string;
  summary: string;
  auth: RouteAuth;
  /** Reachable by a person who still owes the first-login password change. */
  allowBeforePasswordChange?: boolean;
  /** Skips the per-principal rate limit (health checks only). */
  unlimited?: boolean;
  /**
   * An area's own per-principal token bucket, taken besides the daemon-wide one (spec 2 §8: the
   * serverless routes allow 100 per second, burst 200). Routes sharing `group` share the bucket.
   */
  rateLimit?: { group: string; burst: number; refillPerSecond: number };
  params?: P;
  query?: Q;
  body?: B;
  /** Byte cap for the JSON body; defaults to 8 KiB (spec 1 §8.1). */
  bodyLimit?: number;
  /**
   * Where the spec fixes the answer to a `{projectID}` that is not a UUID (spec 3 §7: 400 for
   * vector and cache, 404 for messaging). Without it the segment is any project reference.
   */
  projectIdRule?: ProjectIdRule;
  /**
   * The listener that serves the route: the public one unless named. `sandbox` routes answer only
   * on the sandbox listener (SANDBOX_URL, spec 2 §4.6) and are unknown on every other.
   */
  listener?: 'sandbox';
  /**
   * Media types other than JSON, for the OpenAPI document (the approval page of device sign-in
   * answers HTML and takes a form); such routes are raw and parse their own input.
   */
  media?: { request?: string; response?: string };
  /** Success status and body schema. */
  status: number;
  response: R;
}

/** Declares a route; the literal type is kept so handlers see exact param, query and body types. */
export function route<const C extends RouteContract>(c: C): C {
  return c;
}

export type Infer<T> = T extends z.ZodType ? z.infer<T> : undefined;
export type BodyOf<C> = C extends RouteContract<any, any, infer B, any> ? z.input<B> : never;
export type QueryOf<C> = C extends RouteContract<any, infer Q, any, any> ? z.input<Q> : never;
export type ResponseOf<C> = C extends RouteContract<any, any, any, infer R> ? z.output<R> : never;

export const KiB = 1024;
export const MiB = 1024 * 1024;
export const DEFAULT_BODY_LIMIT = 8 * KiB;

export type ProjectIdRule = 'uuid-400' | 'uuid-404';

/** Applies one area rate limit to every route of an area's contract table. */
export function withRateLimit<T extends Record<string, RouteContract>>(limit: NonNullable<RouteContract['rateLimit']>, routes: T): T {
  for (const r of Object.values(routes)) r.rateLimit = limit;
  return routes;
}

/** Applies one `{projectID}` rule to every route of an area's contract table. */
export function withProjectIdRule<T extends Record<string, RouteContract>>(rule: ProjectIdRule, routes: T): T {
  for (const r of Object.values(routes)) r.projectIdRule = rule;
  return routes;
}
