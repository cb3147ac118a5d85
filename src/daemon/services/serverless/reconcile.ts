import type { AreaContext } from '../../area.js';
import { isoNow } from '../../clock.js';
import { ApiError } from '../../http/errors.js';
import { tx } from '../../store/db.js';
import type { DataPlane, RevisionReport, ServiceDesired } from './plane.js';
import { runTemplate } from './revisions.js';
import { activeRoutes, derive, stampConditions } from './status.js';
import { conditionsOf, QUOTA_REASON, serverlessStore as store, specOf, type ServiceRow } from './store.js';
import { effectiveConcurrency, effectiveMaxScale } from './validate.js';
import { publicUrl } from './view.js';

const shortOf = (ctx: AreaContext, projectId: string) =>
  (ctx.db.prepare('SELECT short FROM acct_projects WHERE id = ?').get(projectId) as { short: string } | undefined)?.short;

/** Re-derives conditions and state from the stored reports and persists them when they changed. */
export function refresh(ctx: AreaContext, serviceId: string): ServiceRow | undefined {
  const s = store.byId(ctx.db, serviceId);
  if (!s) return undefined;
  const revs = store.revisions(ctx.db, s.id);
  if (!revs.length) return s;
  const d = derive(specOf(s), revs, s.invalid, publicUrl(ctx.config, s.name, shortOf(ctx, s.project_id) ?? ''));
  const now = isoNow(ctx.clock);
  const conditions = JSON.stringify(stampConditions(d.conditions, conditionsOf(s), now));
  const observed = d.observed ? s.generation : s.observed_generation;
  if (conditions === s.conditions && d.state === s.state && d.message === s.message && observed === s.observed_generation) return s;
  const next: ServiceRow = {
    ...s,
    conditions,
    state: d.state,
    message: d.message,
    observed_generation: observed,
    state_changed_at: d.state === s.state ? s.state_changed_at : now,
  };
  store.update(ctx.db, next);
  return next;
}

/**
 * Keeps the data plane in step with the store: the desired state of a service after every change
 * and at start-up, and the data plane's reports persisted (with the traffic re-applied when a
 * report moves latest_revision, e.g. a new revision became ready).
 */
export class Reconciler {
  /** Set when the data plane refused or failed: reported by the health route. */
  lastError = '';

  constructor(
    private readonly ctx: AreaContext,
    private readonly plane: DataPlane,
  ) {
    plane.onReport((serviceId, revision, r) => this.report(serviceId, revision, r));
  }

  desired(serviceId: string): ServiceDesired | undefined {
    const s = store.byId(this.ctx.db, serviceId);
    const short = s && shortOf(this.ctx, s.project_id);
    if (!s || !short) return undefined;
    const spec = specOf(s);
    const revs = store.revisions(this.ctx.db, s.id);
    const routes = activeRoutes(spec, revs);
    // Revisions that may serve: those of the split and the newest, being readied.
    // A revision the Services quota refused never runs.
    const refused = revs.find((r) => r.name === s.latest_created)?.reason === QUOTA_REASON;
    const wanted = new Set([...(refused ? [] : [s.latest_created]), ...routes.map((r) => r.revision)]);
    return {
      serviceId: s.id,
      projectId: s.project_id,
      projectShort: short,
      name: s.name,
      revisions: revs.filter((r) => wanted.has(r.name)).map((r) => runTemplate(this.ctx, s, short, r)),
      traffic: routes,
      scaling: {
        minScale: spec.scaling.min_scale,
        maxScale: effectiveMaxScale(spec.scaling.max_scale),
        containerConcurrency: effectiveConcurrency(spec.scaling.container_concurrency),
      },
      published: spec.publish.enabled,
    };
  }

  /** Pushes one service's desired state; a template that cannot be built (sealed env unreadable) marks the service invalid. */
  apply(serviceId: string): void {
    let desired: ServiceDesired | undefined;
    try {
      desired = this.desired(serviceId);
    } catch (e) {
      this.markInvalid(serviceId, `the revision cannot be prepared: ${e instanceof ApiError ? e.message : String(e)}`);
      return;
    }
    if (!desired) return;
    this.markInvalid(serviceId, '');
    try {
      this.plane.apply(desired);
      this.lastError = '';
    } catch (e) {
      this.lastError = String((e as Error)?.message ?? e);
      this.ctx.log.error('serverless data plane apply failed', { service: serviceId, error: this.lastError });
      this.markInvalid(serviceId, `rejected by the platform: ${this.lastError}`);
    }
  }

  private markInvalid(serviceId: string, why: string): void {
    const s = store.byId(this.ctx.db, serviceId);
    if (!s || s.invalid === why) return;
    tx(this.ctx.db, () => {
      store.update(this.ctx.db, { ...s, invalid: why });
      refresh(this.ctx, serviceId);
    });
  }

  /** A report from the data plane: persisted; when it moves the served split, the split is re-applied. */
  report(serviceId: string, revision: string, r: RevisionReport): void {
    try {
      const before = this.routesKey(serviceId);
      const found = tx(this.ctx.db, () => {
        const row = store.revision(this.ctx.db, serviceId, revision);
        if (!row) return false;
        const readyAt = row.ready_at ?? (r.state === 'ready' ? isoNow(this.ctx.clock) : null);
        // A report without the network word keeps the stored one (it does not change for a revision).
        const network = r.network ? JSON.stringify(r.network) : row.network;
        store.report(this.ctx.db, serviceId, revision, { state: r.state, reason: r.reason ?? '', message: r.message ?? '', replicas: r.replicas, ready_at: readyAt, network });
        refresh(this.ctx, serviceId);
        return true;
      });
      if (found && this.routesKey(serviceId) !== before) this.apply(serviceId);
    } catch (e) {
      // The database may be unusable for a moment: the data plane reports again on the next change.
      this.ctx.log.error('serverless report not stored', { service: serviceId, revision, error: String((e as Error)?.message ?? e) });
    }
  }

  private routesKey(serviceId: string): string {
    const s = store.byId(this.ctx.db, serviceId);
    return s ? JSON.stringify(activeRoutes(specOf(s), store.revisions(this.ctx.db, s.id))) : '';
  }

  /** Start-up: every stored service is re-derived and handed to the data plane again. */
  start(): void {
    for (const s of store.all(this.ctx.db)) {
      refresh(this.ctx, s.id);
      this.apply(s.id);
    }
  }
}
