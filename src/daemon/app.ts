import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { ZodError } from 'zod';
import type { Area, AreaContext, Hooks } from './area.js';
import { emptyHooks } from './area.js';
import type { Clock } from './clock.js';
import { systemClock } from './clock.js';
import type { DaemonConfig } from './config.js';
import { ApiError, tooMany } from './http/errors.js';
import { Pager } from './http/paging.js';
import { TokenBuckets } from './http/rate-limit.js';
import { Router, sendJson } from './http/router.js';
import { describeIssue } from './http/validate.js';
import { requestTarget } from './http/request-target.js';
import { restoreMethod } from './http/methods.js';
import { silentLogger, type Logger } from './logger.js';
import { CredentialResolver } from './services/auth/credentials.js';
import { principalKey, type Principal } from './services/auth/principal.js';
import { SessionTokens } from './services/auth/session-tokens.js';
import { gateProject } from './services/accounts/projects.js';
import { migrate, type Db } from './store/db.js';
import { requestBegan } from './store/table-changes.js';
import { describeDatabaseError, isDatabaseUnavailable } from './store/unavailable.js';
import type { RouteContract } from '../api/contract.js';
import { isInternalCall } from './internal-call.js';
import { arrivedOnInternalListener } from './http/internal-listener.js';
import { newRequestId } from './ids.js';
import { arrivedOnSandboxListener } from './services/sandbox/listener.js';
import { applyForwardedHeaders, clientAddressOf, trustedProxies } from './http/client-address.js';
import type { AccessLog } from './http/access-log.js';
import { Startup } from './startup.js';

export interface AppDeps {
  db: Db;
  config: DaemonConfig;
  areas: Area[];
  /** 32+ random bytes: signs session tokens and page tokens. */
  signingKey: Buffer;
  clock?: Clock;
  log?: Logger;
  /** Server mode: told of every request once its response is over (docs/decisions/server.md). */
  accessLog?: AccessLog;
  /** The scheme of the public listener, for the access log (a trusted proxy may say otherwise). */
  scheme?: 'http' | 'https';
}

export interface App {
  /** The node:http request listener (express added ~90 ms to start-up for features we did not use). */
  handler: RequestListener;
  router: Router;
  ctx: AreaContext;
  start(): Promise<void>;
  stop(): Promise<void>;
}

const REQUEST_ID_HEADER = 'X-Request-Id';
const NO_PROXIES = trustedProxies([]);

/**
 * Builds the daemon's HTTP application from its areas. Order of work per request: request id,
 * credential, rate limit, route match (404/405), route gates, validation, handler, envelope.
 */
export function createApp(deps: AppDeps): App {
  const clock = deps.clock ?? systemClock;
  const log = deps.log ?? silentLogger;
  const sessions = new SessionTokens(deps.signingKey, clock, deps.config.sessions?.ttlSeconds);
  const ctx: AreaContext = {
    db: deps.db,
    clock,
    config: deps.config,
    pager: new Pager(deps.signingKey),
    sessions,
    log,
    hooks: emptyHooks(),
    startup: new Startup(),
  };
  const router = new Router();
  router.projectGate = (principal, ref) => gateProject(ctx, principal, ref);
  // Host and path routes are hooks, not router routes: remembered per area for the start gate.
  const areaOfHook = new WeakMap<object, string>();
  for (const area of deps.areas) {
    if (area.migrations) migrate(deps.db, area.name, area.migrations);
    const [hosts, paths] = [ctx.hooks.hostRoutes.length, ctx.hooks.pathRoutes.length];
    router.registering = area.name;
    area.register(router, ctx);
    for (const h of [...ctx.hooks.hostRoutes.slice(hosts), ...ctx.hooks.pathRoutes.slice(paths)]) areaOfHook.set(h, area.name);
  }
  router.registering = undefined;
  const starting = deps.areas.filter((a) => a.start);
  ctx.startup.expect(starting.map((a) => a.name));
  const { startup } = ctx;
  const credentials = new CredentialResolver(deps.db, sessions, clock);
  const buckets = new TokenBuckets(deps.config.rateLimit, clock);
  // Areas with a limit of their own (spec 2 §8: serverless) take from their bucket as well.
  const areaBuckets = new Map<string, TokenBuckets>();
  const areaBucket = (l: NonNullable<RouteContract['rateLimit']>) => {
    let b = areaBuckets.get(l.group);
    if (!b) areaBuckets.set(l.group, (b = new TokenBuckets({ burst: l.burst, refillPerSecond: l.refillPerSecond }, clock)));
    return b;
  };

  const proxies = trustedProxies(deps.config.server?.behindProxy);
  const accessLog = deps.accessLog;

  const handler: RequestListener = async (req, res) => {
    // Cached look-ups read data_version again for this request (store/table-changes.ts).
    requestBegan(deps.db);
    const requestId = newRequestId();
    res.setHeader(REQUEST_ID_HEADER, requestId);
    // Only the public listener has a proxy in front: on the loopback ones the peers are this
    // machine's processes and workloads, whose X-Forwarded-* must not count even when the proxy
    // is on 127.0.0.1 too.
    const onPublic = deps.config.server !== undefined && req.socket.localPort === deps.config.server.listenPort;
    const trusted = onPublic ? proxies : NO_PROXIES;
    const scheme = applyForwardedHeaders(req, trusted, onPublic ? (deps.scheme ?? 'http') : 'http');
    const ip = clientAddressOf(req, trusted);
    // Filled in as the request is understood; the access line is written once the response is over.
    const seen: { route: string; principal?: Principal } = { route: '(unmatched)' };
    if (accessLog) {
      const started = performance.now();
      res.once('close', () =>
        accessLog({
          time: new Date().toISOString(),
          request_id: requestId,
          principal: seen.principal ? principalKey(seen.principal) : null,
          method: req.method ?? 'GET',
          route: seen.route,
          // A response cut off before its head went out never had a status the client saw.
          status: res.headersSent ? res.statusCode : 0,
          duration_ms: Math.round((performance.now() - started) * 10) / 10,
          client: ip,
          scheme,
        }),
      );
    }
    // A bearer credential was sent and not accepted (invalid, expired, revoked): a 401 then says
    // so (RFC 6750 invalid_token), which is what tells a client to refresh rather than give up.
    let refused = false;
    const resolve = async () => {
      const principal = await credentials.resolve(req.headers.authorization);
      refused = !principal && /^Bearer\s/i.test(req.headers.authorization ?? '');
      seen.principal = principal;
      return principal;
    };
    // The metrics label is the same route name: the matched template or a fixed name, never the raw path.
    if (ctx.hooks.requestObservers.length) observeRequest(req, res, seen, ctx.hooks.requestObservers);
    try {
      restoreMethod(req);
      // The sandbox listener serves the sandbox routes and nothing else (spec 2 §4.6).
      if (arrivedOnSandboxListener(req)) {
        const url = requestTarget(req.url);
        const { route, params } = router.match(req.method ?? 'GET', url.pathname, 'sandbox');
        seen.route = route.contract.path;
        const starting = startup.pending(route.area);
        if (starting) await starting;
        return await router.run(route, params, { requestId, ip, req, res }, url);
      }
      // Workload public addresses are routed by Host before any path matching (DESIGN.md).
      // The internal listener serves path routes only (MCP endpoints), whatever the Host says.
      const internal = arrivedOnInternalListener(req);
      const hosted = internal ? undefined : ctx.hooks.hostRoutes.find((h) => h.matches(String(req.headers.host ?? '')));
      if (hosted) seen.route = hosted.ownEdge ? '(gateway address)' : '(workload address)';
      const hostedStarting = hosted && startup.pending(areaOfHook.get(hosted));
      if (hostedStarting) await hostedStarting;
      if (hosted?.ownEdge) return await hosted.serve({ requestId, ip, req, res });
      if (hosted) {
        const principal = await resolve();
        const wait = isInternalCall(req) ? 0 : buckets.take(principal ? principalKey(principal) : `ip:${ip}`);
        if (wait > 0) throw tooMany('rate limit exceeded: slow down and retry after the time in Retry-After', wait);
        return await hosted.serve({ requestId, ip, principal, req, res });
      }
      const url = requestTarget(req.url);
      const byPath = ctx.hooks.pathRoutes.find((p) => p.matches(url.pathname));
      if (byPath) {
        seen.route = '(path route)';
        const pathStarting = startup.pending(areaOfHook.get(byPath));
        if (pathStarting) await pathStarting;
        // Workloads on the internal listener are inside the platform: no per-caller rate limit there.
        const wait = internal ? 0 : buckets.take(`ip:${ip}`);
        if (wait > 0) throw tooMany('rate limit exceeded: slow down and retry after the time in Retry-After', wait);
        return await byPath.serve({ requestId, ip, req, res }, internal);
      }
      if (internal) throw new ApiError(404, `no route for ${req.method ?? 'GET'} ${url.pathname} on the internal listener (it serves MCP server endpoints only)`);
      const { route, params } = router.match(req.method ?? 'GET', url.pathname);
      seen.route = route.contract.path;
      const principal = route.contract.auth === 'none' && route.contract.unlimited ? undefined : await resolve();
      if (!route.contract.unlimited) {
        const key = principal ? principalKey(principal) : `ip:${ip}`;
        const wait = Math.max(buckets.take(key), route.contract.rateLimit ? areaBucket(route.contract.rateLimit).take(key) : 0);
        if (wait > 0) throw tooMany('rate limit exceeded: slow down and retry after the time in Retry-After', wait);
      }
      // Await only while the area is still starting: once started, no promise per request.
      const starting = startup.pending(route.area);
      if (starting) await starting;
      await router.run(route, params, { requestId, ip, principal, req, res }, url);
    } catch (err) {
      try {
        sendError(req, res, err, requestId, log, refused);
      } catch (fatal) {
        // Nothing a request sends may take the process down: drop this one connection instead.
        log.error('could not answer request', { request_id: requestId, error: String(fatal) });
        res.destroy();
      }
    }
  };

  let startRun: Promise<void> | undefined;
  let stopping = false;
  const begun = new Set<Area>();
  return {
    handler,
    router,
    ctx,
    start() {
      startRun ??= (async () => {
        for (const area of starting) {
          // Requests that arrived meanwhile (the CLI's first /healthz) are answered between two areas.
          await new Promise((resolve) => setImmediate(resolve));
          // A stop during the start: the areas not started yet never start (nothing to stop then).
          if (stopping) return;
          begun.add(area);
          try {
            await area.start!(ctx);
          } catch (e) {
            startup.failed(area.name, e as Error);
            throw e;
          }
          startup.started(area.name);
        }
      })();
      return startRun;
    },
    async stop() {
      stopping = true;
      await startRun?.catch(() => undefined);
      // One area failing to stop must not leave the next ones (workloads, cache servers) running.
      for (const area of [...deps.areas].reverse()) {
        if (area.start && !begun.has(area)) continue;
        try {
          await area.stop?.();
        } catch (e) {
          log.error('area stop failed', { area: area.name, error: String((e as Error)?.stack ?? e) });
        }
      }
    },
  };
}

function sendError(req: IncomingMessage, res: ServerResponse, err: unknown, requestId: string, log: Logger, credentialRefused = false): void {
  if (clientGone(req, res)) {
    // The client hung up mid-request (an aborted upload): nothing to answer, nothing broken,
    // whatever error the half-read request caused.
    log.info('client closed the connection mid-request', { request_id: requestId, method: req.method, path: pathOf(req.url) });
    res.destroy();
    return;
  }
  let status = 500;
  let message = 'internal error';
  let headers: Record<string, string> = {};
  let extra: Record<string, unknown> = {};
  if (err instanceof ApiError) {
    ({ status, headers, extra } = err);
    message = err.message;
  } else if (isDatabaseUnavailable(err)) {
    // Spec 2 §4.3 (503 when the platform database is unreachable), spec 1 §7 (store not usable).
    status = 503;
    message = `the platform database is unreachable (${describeDatabaseError(err)}); try again`;
    log.error('database unavailable', { request_id: requestId, method: req.method, path: pathOf(req.url), error: String((err as Error)?.message ?? err) });
  } else if (err instanceof ZodError) {
    status = 400;
    message = describeIssue(err.issues[0]!, 'body');
  } else {
    log.error('unhandled error', { request_id: requestId, method: req.method, url: req.url, error: String((err as Error)?.stack ?? err) });
  }
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (status === 401 && credentialRefused) headers = { ...headers, 'WWW-Authenticate': 'Bearer error="invalid_token", error_description="the token is invalid, expired or revoked"' };
  // A refused request whose body is still arriving (a 413 from Content-Length, a 401 before an
  // upload) closes the connection: keeping it alive would make Node read and drop the whole body.
  if (bodyStillComing(req)) headers = { ...headers, Connection: 'close' };
  sendJson(res, status, { error: message, request_id: requestId, ...extra }, headers);
}

/** Tells the observers how a request ended once its response is done (or its connection gone). */
function observeRequest(req: IncomingMessage, res: ServerResponse, served: { route: string }, observers: Hooks['requestObservers']): void {
  const started = performance.now();
  res.once('close', () => {
    const seconds = (performance.now() - started) / 1000;
    // A connection that went away before any answer counts as 499, as proxies log it.
    const status = res.headersSent ? res.statusCode : 499;
    for (const o of observers) o(req.method ?? 'GET', served.route, status, seconds);
  });
}

/** A request with a body (declared or chunked) that has not all arrived yet. */
const bodyStillComing = (req: IncomingMessage) =>
  !req.complete && (req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0);

/** Whether the peer went away before its request was complete (an aborted upload). */
const clientGone = (req: IncomingMessage, res: ServerResponse) => !req.complete && (req.destroyed || res.destroyed || req.socket?.destroyed === true);

/** The path part of a target for a log line: no query (it may carry tokens), bounded. */
const pathOf = (url: string | undefined) => (url ?? '').split('?', 1)[0]!.slice(0, 200);
