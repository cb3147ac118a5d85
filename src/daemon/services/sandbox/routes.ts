import { sandboxRoutes } from '../../../api/sandbox.js';
import type { Area } from '../../area.js';
import { containerOwner, dockerBackend, probeBwrap, probeDocker, processBackend, removeLeftoverContainers, type Backend } from './backends.js';
import type { SandboxChild } from './child.js';
import { SandboxPool } from './pool.js';
import * as svc from './service.js';

/**
 * The code sandbox (spec 2 §2.6, §4.6, §7, §8): its routes answer on the sandbox listener only
 * (listener.ts). Start picks the isolation (docs/decisions/sandbox.md) and fills the warm pool;
 * with neither bubblewrap nor Docker it refuses every run with 503 rather than run code bare.
 */
export function createSandboxArea(): Area {
  let backend: Backend | undefined;
  let reason = 'the sandbox is starting';
  let pool: SandboxPool | undefined;
  const calls = new Set<SandboxChild>();
  return {
    name: 'sandbox',
    register(r, ctx) {
      const cfg = ctx.config.sandbox;
      const deps: svc.Deps = {
        db: ctx.db,
        callReadyMs: cfg.callReadyMs,
        get pool() {
          return pool!;
        },
        backend: () => backend,
        unavailableReason: () => reason,
        calls,
      };
      r.handle(sandboxRoutes.execute, ({ body }) => svc.execute(deps, body));
      r.handle(sandboxRoutes.call, ({ body }) => svc.call(deps, body));
      const stats = () => (pool ? pool.stats() : { warm: 0, target: cfg.poolTarget, in_flight: 0, created_total: 0 });
      r.handle(sandboxRoutes.pool, stats);
      ctx.hooks.metricsReaders.push({
        area: 'sandbox',
        read: () => {
          const s = stats();
          return (['warm', 'in_flight', 'target'] as const).map((state) => ({ name: 'platform_sandbox_pool' as const, labels: { state }, value: s[state] }));
        },
      });
    },
    async start(ctx) {
      const cfg = ctx.config.sandbox;
      const reasons: string[] = [];
      if (cfg.mode !== 'docker') {
        const no = await probeBwrap(cfg.python);
        if (!no) backend = processBackend(cfg);
        else reasons.push(no);
      }
      if (!backend && cfg.mode !== 'process') {
        const no = await probeDocker(cfg.image);
        if (!no) {
          const owner = containerOwner(ctx.config.home);
          await removeLeftoverContainers(owner);
          backend = dockerBackend(cfg, owner);
        } else reasons.push(no);
      }
      reason = reasons.join('; ');
      if (backend) ctx.log.info('code sandbox ready', { mode: backend.kind, detail: backend.detail, pool_target: cfg.poolTarget });
      else ctx.log.warn('code sandbox refuses to run code: no isolation', { reason });
      pool = new SandboxPool(backend, reason, cfg, ctx.log);
      pool.start();
    },
    async stop() {
      await Promise.all([pool?.stop(), ...[...calls].map((c) => c.kill())]);
    },
  };
}
