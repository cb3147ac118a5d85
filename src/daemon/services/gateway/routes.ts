import { gatewayRoutes as R } from '../../../api/gateway.js';
import type { Area } from '../../area.js';
import type { Router } from '../../http/router.js';
import { compileRanges, normaliseCidr } from './allowlist.js';
import { DomainSweep } from './domains.js';
import { Forwarder } from './forward.js';
import { JwtVerifier } from './jwt.js';
import { gatewayMigrations } from './migrations.js';
import { projectCredentials } from './project-credentials.js';
import { RateLimiter } from './rate-limiter.js';
import { isGatewayHost, serveGateway, type ServeDeps } from './serve.js';
import * as svc from './service.js';
import { gatewayStore } from './store.js';

/**
 * The gateway (spec 2 §2.5, §3, §4.5): endpoints that publish a project's workloads at
 * `<name>-<short>.<gateway_domain>` or a verified custom hostname, with their own auth, allow
 * list and rate limit. A fresh area per daemon: it owns a forwarding pool, a key-set cache,
 * rate counters and the domain sweep.
 */
export function createGatewayArea(): Area {
  let forwarder: Forwarder | undefined;
  let sweep: DomainSweep | undefined;
  return {
    name: 'gateway',
    migrations: gatewayMigrations,
    register(r, ctx) {
      const g = ctx.config.gateway;
      forwarder = new Forwarder(g.targetTimeoutSeconds * 1000);
      const limiter = new RateLimiter(ctx.clock);
      const credentials = projectCredentials(ctx);
      const serve: ServeDeps = {
        ctx,
        forwarder,
        jwt: new JwtVerifier(g, ctx.clock),
        limiter,
        credentials,
        trusted: compileRanges(g.trustedProxies.map((c) => normaliseCidr(c, 'PLATFORM_GATEWAY_TRUSTED_PROXIES'))),
      };
      const d: svc.Deps = { ctx, credentials, changed: (id) => limiter.forget(id) };
      registerRoutes(r, d);
      ctx.hooks.hostRoutes.push({ matches: (host) => isGatewayHost(ctx, host), serve: (c) => serveGateway(serve, c), ownEdge: true });
      ctx.hooks.projectDependents.push((projectId) => {
        const n = gatewayStore.countInProject(ctx.db, projectId);
        return n ? `${n} gateway endpoint${n === 1 ? '' : 's'}` : undefined;
      });
      sweep = new DomainSweep(ctx);
    },
    async start() {
      sweep!.start();
    },
    async stop() {
      sweep?.stop();
      await forwarder?.close();
    },
  };
}

function registerRoutes(r: Router, d: svc.Deps): void {
  r.handle(R.list, ({ principal, params, query }) => svc.list(d, principal!, params.projectID, query));
  r.handle(R.create, ({ principal, params, body }) => svc.create(d, principal!, params.projectID, body));
  r.handle(R.get, ({ principal, params }) => svc.get(d, principal!, params.projectID, params.name));
  r.handle(R.patch, ({ principal, params, body }) => svc.patch(d, principal!, params.projectID, params.name, body));
  r.handle(R.delete, ({ principal, params }) => svc.remove(d, principal!, params.projectID, params.name));
  r.handle(R.publish, ({ principal, params }) => svc.setPublished(d, principal!, params.projectID, params.name, true));
  r.handle(R.unpublish, ({ principal, params }) => svc.setPublished(d, principal!, params.projectID, params.name, false));
  r.handle(R.keys, ({ principal, params }) => svc.keys(d, principal!, params.projectID, params.name));
  r.handle(R.createKey, ({ principal, params, body }) => svc.createKey(d, principal!, params.projectID, params.name, body));
  r.handle(R.rotateKey, ({ principal, params }) => svc.rotateKey(d, principal!, params.projectID, params.name, params.keyID));
  r.handle(R.revokeKey, ({ principal, params }) => svc.revokeKey(d, principal!, params.projectID, params.name, params.keyID));
  r.handle(R.claimDomain, ({ principal, params, body }) => svc.claimDomain(d, principal!, params.projectID, body));
  r.handle(R.domains, ({ principal, params, query }) => svc.domains(d, principal!, params.projectID, query));
  r.handle(R.releaseDomain, ({ principal, params }) => svc.releaseDomain(d, principal!, params.projectID, params.domain));
}
