import { randomBytes } from 'node:crypto';
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { ZodError } from 'zod';
import type { Area, AreaContext } from './area.js';
import { emptyHooks } from './area.js';
import type { Clock } from './clock.js';
import { systemClock } from './clock.js';
import type { DaemonConfig } from './config.js';
import { ApiError, tooMany } from './http/errors.js';
import { Pager } from './http/paging.js';
import { TokenBuckets } from './http/rate-limit.js';
import { Router, sendJson } from './http/router.js';
import { describeIssue } from './http/validate.js';
import { silentLogger, type Logger } from './logger.js';
import { CredentialResolver } from './services/auth/credentials.js';
import { principalKey } from './services/auth/principal.js';
import { SessionTokens } from './services/auth/session-tokens.js';
import { gateProject } from './services/accounts/projects.js';
import { migrate, type Db } from './store/db.js';
import { isInternalCall } from './internal-call.js';

export interface AppDeps {
  db: Db;
  config: DaemonConfig;
  areas: Area[];
  /** 32+ random bytes: signs session tokens and page tokens. */
  signingKey: Buffer;
  clock?: Clock;
  log?: Logger;
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
export const newRequestId = () => `req_${randomBytes(12).toString('hex')}`;

/**
 * Builds the daemon's HTTP application from its areas. Order of work per request: request id,
 * credential, rate limit, route match (404/405), route gates, validation, handler, envelope.
 */
export function createApp(deps: AppDeps): App {
  const clock = deps.clock ?? systemClock;
  const log = deps.log ?? silentLogger;
  const sessions = new SessionTokens(deps.signingKey, clock);
  const ctx: AreaContext = {
    db: deps.db,
    clock,
    config: deps.config,
    pager: new Pager(deps.signingKey),
    sessions,
    log,
    hooks: emptyHooks(),
  };
  const router = new Router();
  router.projectGate = (principal, ref) => gateProject(ctx, principal, ref);
  for (const area of deps.areas) {
    if (area.migrations) migrate(deps.db, area.name, area.migrations);
    area.register(router, ctx);
  }
  const credentials = new CredentialResolver(deps.db, sessions, clock);
  const buckets = new TokenBuckets(deps.config.rateLimit, clock);

  const handler: RequestListener = async (req, res) => {
    const requestId = newRequestId();
    res.setHeader(REQUEST_ID_HEADER, requestId);
    const url = new URL(req.url ?? '/', 'http://localhost');
    const ip = req.socket.remoteAddress ?? 'unknown';
    try {
      // Workload public addresses are routed by Host before any path matching (DESIGN.md).
      const hosted = ctx.hooks.hostRoutes.find((h) => h.matches(String(req.headers.host ?? '')));
      if (hosted) {
        const principal = await credentials.resolve(req.headers.authorization);
        const wait = isInternalCall(req) ? 0 : buckets.take(principal ? principalKey(principal) : `ip:${ip}`);
        if (wait > 0) throw tooMany('rate limit exceeded: slow down and retry after the time in Retry-After', wait);
        return await hosted.serve({ requestId, ip, principal, req, res });
      }
      const { route, params } = router.match(req.method ?? 'GET', url.pathname);
      const principal = route.contract.auth === 'none' && route.contract.unlimited ? undefined : await credentials.resolve(req.headers.authorization);
      if (!route.contract.unlimited) {
        const wait = buckets.take(principal ? principalKey(principal) : `ip:${ip}`);
        if (wait > 0) throw tooMany('rate limit exceeded: slow down and retry after the time in Retry-After', wait);
      }
      await router.run(route, params, { requestId, ip, principal, req, res }, url);
    } catch (err) {
      sendError(req, res, err, requestId, log);
    }
  };

  return {
    handler,
    router,
    ctx,
    async start() {
      for (const area of deps.areas) await area.start?.(ctx);
    },
    async stop() {
      // One area failing to stop must not leave the next ones (workloads, cache servers) running.
      for (const area of [...deps.areas].reverse()) {
        try {
          await area.stop?.();
        } catch (e) {
          log.error('area stop failed', { area: area.name, error: String((e as Error)?.stack ?? e) });
        }
      }
    },
  };
}

function sendError(req: IncomingMessage, res: ServerResponse, err: unknown, requestId: string, log: Logger): void {
  let status = 500;
  let message = 'internal error';
  let headers: Record<string, string> = {};
  let extra: Record<string, unknown> = {};
  if (err instanceof ApiError) {
    ({ status, headers, extra } = err);
    message = err.message;
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
  sendJson(res, status, { error: message, request_id: requestId, ...extra }, headers);
}
