import { createServer, type RequestListener, type Server } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createApp, type App } from './app.js';
import { listenerPort, startQdrantListener } from './http/qdrant-listener.js';
import { startInternalListener } from './http/internal-listener.js';
import { startSandboxListener } from './services/sandbox/listener.js';
import type { DaemonConfig } from './config.js';
import { bootstrap, ensureStateDirs, loadSigningKey, statePaths, type BootstrapAdmin } from './bootstrap.js';
import { openDb, type Db } from './store/db.js';
import { allAreas } from './registry.js';
import type { PlaneFactory } from './services/serverless/routes.js';
import type { Clock } from './clock.js';
import { systemClock } from './clock.js';
import type { Logger } from './logger.js';
import { silentLogger } from './logger.js';
import { handleClientErrors } from './http/client-errors.js';
import type { AccessLog } from './http/access-log.js';
import { setupTokenOf } from './services/auth/setup-token.js';
import { readTls, reloadTls } from './serving/tls.js';
import { drain } from './serving/drain.js';
import { listenUrlOf } from './public-address.js';
import { loadHttps } from './lazy/modules.js';

export interface RunningDaemon {
  url: string;
  /** The internal listener: private MCP servers' addresses (docs/decisions/mcp.md). */
  internalUrl: string;
  /** The sandbox listener (SANDBOX_URL, spec 2 §4.6). */
  sandboxUrl: string;
  port: number;
  app: App;
  db: Db;
  server: Server;
  /**
   * Settles once every area has started (rejects when one failed). Already settled when startDaemon
   * returns unless `reconcileInBackground` was asked for.
   */
  reconciled: Promise<void>;
  /** Server mode: the public listener's address (`https://...` with TLS); undefined for the local daemon. */
  publicUrl?: string;
  /** Server mode with TLS: reads the certificate files again (SIGHUP); false when they were unusable. */
  reloadTls?: () => boolean;
  /**
   * Stops: the public listener first stops accepting and drains what is in flight for up to
   * `drainMs` (0: cut at once, the local daemon's stop), then every listener closes, the areas
   * stop (workloads included) and the store closes.
   */
  close(opts?: { drainMs?: number }): Promise<void>;
}

/**
 * Opens the state directory, bootstraps it on first start, builds the app and listens on
 * loopback. Used by the daemon process and by in-process tests alike.
 */
export async function startDaemon(
  config: DaemonConfig,
  opts: {
    clock?: Clock;
    log?: Logger;
    /** Told the bootstrap admin of a first start (undefined otherwise) before anything is spawned. */
    onBootstrap?: (admin: BootstrapAdmin | undefined) => void;
    /** Tests of the serverless control plane observe the data plane through this seam. */
    serverlessPlane?: PlaneFactory;
    /** Server mode: a server's first start with nobody to sign in is told its one-time setup token. */
    onSetupToken?: (setup: { token: string; expiresAt: number }) => void;
    /** Server mode: one entry per request (docs/decisions/server.md). */
    accessLog?: AccessLog;
    /**
     * Return once the listeners listen and start the areas behind them (the daemon process): a
     * request for an area not started yet waits for it (docs/decisions/speed-daemon.md).
     */
    reconcileInBackground?: boolean;
  } = {},
): Promise<RunningDaemon> {
  const clock = opts.clock ?? systemClock;
  const log = opts.log ?? silentLogger;
  const paths = statePaths(config.home);
  ensureStateDirs(paths);
  const db = openDb(paths.db);
  const serving = config.server;
  const tls = serving?.tls ? readTls(serving.tls) : undefined;
  const app = createApp({
    db,
    config,
    areas: allAreas({ serverlessPlane: opts.serverlessPlane }),
    signingKey: loadSigningKey(paths),
    clock,
    log,
    accessLog: opts.accessLog,
    scheme: tls ? 'https' : 'http',
  });
  // A server never signs anyone in by itself: without an admin password given, its first admin
  // comes from a one-time setup token (docs/decisions/server.md, First admin).
  const admin = serving && config.admin.password === undefined ? undefined : await bootstrap(db, clock, config.admin);
  opts.onBootstrap?.(admin);
  // Every listener of the daemon gets the same edge: timeouts, a connection cap, and the
  // envelope for what Node's parser refuses.
  const edgeServer = (
    handler: RequestListener,
    pathOf: (path: string) => string = (p) => p,
    listener: 'main' | 'sandbox' = 'main',
    secure?: { cert: Buffer; key: Buffer },
  ): Server => {
    const httpOptions = {
      headersTimeout: config.http.headersTimeoutSeconds * 1000,
      // Bounds receiving the request only: Node stops the clock once the request is complete, so
      // streamed responses (logs --follow, NDJSON invoke) run as long as their own limits allow.
      requestTimeout: config.http.requestTimeoutSeconds * 1000,
      // Node checks those timeouts on this interval (30 s by default, longer than the timeouts).
      connectionsCheckingInterval: 1_000,
    };
    // An https server is an http server behind TLS: the same request handling applies to both.
    const s = secure ? (loadHttps().createServer({ ...httpOptions, ...secure }, handler) as unknown as Server) : createServer(httpOptions, handler);
    s.keepAliveTimeout = 5_000;
    s.maxConnections = config.http.maxConnections;
    handleClientErrors(s, log, {
      headersSeconds: config.http.headersTimeoutSeconds,
      requestSeconds: config.http.requestTimeoutSeconds,
      allowedMethods: (path) => app.router.allowedMethods(pathOf(path), listener),
    });
    return s;
  };
  // Before the areas start: workloads they bring back get SANDBOX_URL with the real port.
  const sandbox = await startSandboxListener(config.host, config.sandbox.port, app.handler, edgeServer);
  config.sandbox.port = listenerPort(sandbox);
  const sandboxUrl = `http://${config.host}:${config.sandbox.port}`;
  const server = edgeServer(app.handler);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  // Port 0 picks a free port: record the real one so workloads get a reachable SVC_API_URL.
  config.port = port;
  const url = `http://${config.host}:${port}`;
  const internal = await startInternalListener(config.host, config.internalPort, app.handler, edgeServer);
  config.internalPort = listenerPort(internal);
  const internalUrl = `http://${config.host}:${config.internalPort}`;
  let publicServer: Server | undefined;
  let publicUrl: string | undefined;
  if (serving) {
    publicServer = edgeServer(app.handler, undefined, 'main', tls);
    await new Promise<void>((resolve, reject) => {
      publicServer!.once('error', reject);
      publicServer!.listen(serving.listenPort, serving.listenHost, () => resolve());
    });
    serving.listenPort = (publicServer.address() as AddressInfo).port;
    publicUrl = listenUrlOf(serving);
  }
  let qdrant: Server | undefined;
  if (config.vector.qdrantPort !== undefined) {
    qdrant = await startQdrantListener(config.host, config.vector.qdrantPort, app.handler, edgeServer);
    config.vector.qdrantPort = listenerPort(qdrant);
  }
  // Every listener's real port is known now: workloads the areas bring back get reachable addresses.
  const reconciled = app.start();
  if (!opts.reconcileInBackground) await reconciled;
  // Printed once everything listens: a start that fails never shows a token nobody can use.
  if (serving && !db.prepare('SELECT 1 FROM acct_users LIMIT 1').get()) opts.onSetupToken?.(setupTokenOf(app.ctx).issue(clock.now()));
  let closed = false;
  return {
    url,
    internalUrl,
    sandboxUrl,
    port,
    app,
    db,
    server,
    reconciled,
    publicUrl,
    ...(serving?.tls && publicServer ? { reloadTls: () => reloadTls(publicServer as unknown as HttpsServer, serving.tls!, log) } : {}),
    async close(closeOpts = {}) {
      if (closed) return;
      closed = true;
      // The loopback listeners keep serving while the public one drains: a request in flight may
      // be a workload's that calls back into the platform (SVC_API_URL) before it can answer.
      if (publicServer && closeOpts.drainMs) {
        const ended = await drain(publicServer, closeOpts.drainMs);
        log.info('public listener drained', { outcome: ended, deadline_ms: closeOpts.drainMs });
      }
      await Promise.all(
        [publicServer, server, internal, sandbox, qdrant].map(
          (s) =>
            s &&
            new Promise<void>((resolve) => {
              s.close(() => resolve());
              s.closeAllConnections();
            }),
        ),
      );
      await app.stop();
      db.close();
    },
  };
}
