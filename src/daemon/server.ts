import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp, type App } from './app.js';
import type { DaemonConfig } from './config.js';
import { bootstrap, ensureStateDirs, loadSigningKey, statePaths } from './bootstrap.js';
import { openDb, type Db } from './store/db.js';
import { allAreas } from './registry.js';
import type { Clock } from './clock.js';
import { systemClock } from './clock.js';
import type { Logger } from './logger.js';
import { silentLogger } from './logger.js';
import { handleClientErrors } from './http/client-errors.js';

export interface RunningDaemon {
  url: string;
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
export async function startDaemon(config: DaemonConfig, opts: { clock?: Clock; log?: Logger } = {}): Promise<RunningDaemon> {
  const clock = opts.clock ?? systemClock;
  const log = opts.log ?? silentLogger;
  const paths = statePaths(config.home);
  ensureStateDirs(paths);
  const db = openDb(paths.db);
  const app = createApp({ db, config, areas: allAreas(), signingKey: loadSigningKey(paths), clock, log });
  await bootstrap(db, clock, paths, config.admin);
  await app.start();
  const server = createServer(
    {
      headersTimeout: config.http.headersTimeoutSeconds * 1000,
      // Bounds receiving the request only: Node stops the clock once the request is complete, so
      // streamed responses (logs --follow, NDJSON invoke) run as long as their own limits allow.
      requestTimeout: config.http.requestTimeoutSeconds * 1000,
      // Node checks those timeouts on this interval (30 s by default, longer than the timeouts).
      connectionsCheckingInterval: 1_000,
    },
    app.handler,
  );
  server.keepAliveTimeout = 5_000;
  server.maxConnections = config.http.maxConnections;
  handleClientErrors(server, log, {
    headersSeconds: config.http.headersTimeoutSeconds,
    requestSeconds: config.http.requestTimeoutSeconds,
    allowedMethods: (path) => app.router.allowedMethods(path),
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  // Port 0 picks a free port: record the real one so workloads get a reachable SVC_API_URL.
  config.port = port;
  const url = `http://${config.host}:${port}`;
  let closed = false;
  return {
    url,
    port,
    app,
    db,
    server,
    async close() {
      if (closed) return;
      closed = true;
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await app.stop();
      db.close();
    },
  };
}
