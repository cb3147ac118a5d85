import { createServer, type RequestListener, type Server } from 'node:http';
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
  close(): Promise<void>;
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
  } = {},
): Promise<RunningDaemon> {
  const clock = opts.clock ?? systemClock;
  const log = opts.log ?? silentLogger;
  const paths = statePaths(config.home);
  ensureStateDirs(paths);
  const db = openDb(paths.db);
  const app = createApp({ db, config, areas: allAreas({ serverlessPlane: opts.serverlessPlane }), signingKey: loadSigningKey(paths), clock, log });
  const admin = await bootstrap(db, clock, config.admin);
  opts.onBootstrap?.(admin);
  // Every listener of the daemon gets the same edge: timeouts, a connection cap, and the
  // envelope for what Node's parser refuses.
  const edgeServer = (handler: RequestListener, pathOf: (path: string) => string = (p) => p, listener: 'main' | 'sandbox' = 'main'): Server => {
    const s = createServer(
      {
        headersTimeout: config.http.headersTimeoutSeconds * 1000,
        // Bounds receiving the request only: Node stops the clock once the request is complete, so
        // streamed responses (logs --follow, NDJSON invoke) run as long as their own limits allow.
        requestTimeout: config.http.requestTimeoutSeconds * 1000,
        // Node checks those timeouts on this interval (30 s by default, longer than the timeouts).
        connectionsCheckingInterval: 1_000,
      },
      handler,
    );
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
  await app.start();
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
  let qdrant: Server | undefined;
  if (config.vector.qdrantPort !== undefined) {
    qdrant = await startQdrantListener(config.host, config.vector.qdrantPort, app.handler, edgeServer);
    config.vector.qdrantPort = listenerPort(qdrant);
  }
  let closed = false;
  return {
    url,
    internalUrl,
    sandboxUrl,
    port,
    app,
    db,
    server,
    async close() {
      if (closed) return;
      closed = true;
      await Promise.all(
        [server, internal, sandbox, qdrant].map(
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
