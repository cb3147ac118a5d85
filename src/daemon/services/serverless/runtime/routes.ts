import type { Hooks } from '../../../area.js';
import type { ServerlessDataPlane } from './data-plane.js';

/**
 * Puts the data plane's routers in the daemon's request path: the Host router goes FIRST among
 * the host routes (it matches only addresses of existing, published services, so every other
 * `<name>-<short>.apps.localhost` still reaches the agents' router), the internal path form
 * among the path routes (it answers only on the internal listener).
 */
export function registerDataPlaneRoutes(hooks: Hooks, plane: ServerlessDataPlane): void {
  hooks.hostRoutes.unshift({ matches: (host) => plane.matchesHost(host), serve: (ctx) => plane.serveHost(ctx) });
  hooks.pathRoutes.push({ matches: (path) => plane.matchesPath(path), serve: (ctx, internal) => plane.servePath(ctx, internal) });
}
