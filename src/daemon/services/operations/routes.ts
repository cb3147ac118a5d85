import { operationsRoutes } from '../../../api/operations.js';
import type { Area } from '../../area.js';
import { writeAudit } from '../../audit.js';
import { DaemonMetrics } from '../../metrics/daemon-metrics.js';
import { HANDLED } from '../../http/router.js';
import { prepareBackup, removeLeftoverStaging } from './backup.js';

/**
 * Operating the platform (issue 24 §3): `/metrics` for Prometheus and the online backup. Both are
 * for platform admins on the main listener (docs/decisions/operations.md). The metrics module
 * never imports an area: areas report through hooks (metricsReaders, coldStartObservers) and the
 * app reports requests through requestObservers.
 */

export function operationsArea(): Area {
  let metrics: DaemonMetrics | undefined;
  return {
    name: 'operations',
    register(r, ctx) {
      const m = (metrics = new DaemonMetrics(() => ctx.hooks.metricsReaders));
      ctx.hooks.requestObservers.push((method, route, status, seconds) => m.request(method, route, status, seconds));
      ctx.hooks.coldStartObservers.push((kind, seconds) => m.coldStart(kind, seconds));

      r.handle(operationsRoutes.metrics, async ({ res }) => {
        const { contentType, text } = await m.render();
        res.statusCode = 200;
        res.setHeader('Content-Type', contentType);
        res.setHeader('Content-Length', Buffer.byteLength(text));
        res.end(text);
        return HANDLED;
      });

      r.handle(operationsRoutes.backup, async ({ res, principal, requestId }) => {
        const backup = await prepareBackup(ctx);
        try {
          writeAudit(ctx.db, ctx.clock, { actor: principal!.email, action: 'platform.backup', target: ctx.config.home, requestId });
        } catch (e) {
          await backup.discard();
          throw e;
        }
        res.statusCode = 200;
        res.setHeader('Content-Type', 'application/gzip');
        res.setHeader('Content-Disposition', `attachment; filename="platform-backup-${requestId}.tar.gz"`);
        await backup.stream(res).catch((e: Error) => {
          ctx.log.warn('backup stream ended early', { request_id: requestId, error: e.message });
          res.destroy();
        });
        return HANDLED;
      });
    },
    async start(ctx) {
      await removeLeftoverStaging(ctx.config.home);
    },
  };
}
