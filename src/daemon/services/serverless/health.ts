import type { HealthView } from '../../../api/serverless.js';
import type { AreaContext } from '../../area.js';

const TABLES = ['svc_services', 'svc_revisions', 'svc_sources'];

/**
 * GET .../services/healthz (spec 2 §4.3): always 200, degradation in the body. Locally the
 * "crd" is this area's schema and "orchestration" the data plane.
 */
export function health(ctx: AreaContext, planeError: () => string): HealthView {
  const out: HealthView = { status: 'ok', service: 'serverless-api', database: 'ok', sessions: 'ok', orchestration: 'ok', crd: 'ok' };
  try {
    const found = (ctx.db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name IN (${TABLES.map(() => '?').join(',')})`).all(...TABLES) as Array<{ name: string }>).map((r) => r.name);
    const missing = TABLES.filter((t) => !found.includes(t));
    if (missing.length) {
      out.crd = 'missing';
      out.crd_detail = `tables missing: ${missing.join(', ')}`;
    } else {
      ctx.db.prepare('SELECT 1 FROM svc_services LIMIT 1').get();
    }
  } catch (e) {
    out.database = 'unreachable';
    out.database_detail = String((e as Error)?.message ?? e);
  }
  // Sessions are signed tokens checked in memory: usable whenever the signer exists.
  if (!ctx.sessions) {
    out.sessions = 'unavailable';
    out.sessions_detail = 'no session signer in this daemon';
  }
  const err = planeError();
  if (err) {
    out.orchestration = 'unreachable';
    out.orchestration_detail = err;
  }
  if (out.database !== 'ok' || out.sessions !== 'ok' || out.orchestration !== 'ok' || out.crd !== 'ok') out.status = 'degraded';
  return out;
}
