import type { ActiveTraffic, MetricsView, RevisionView, ServiceView } from '../../../api/serverless.js';
import type { DaemonConfig } from '../../config.js';
import { workloadUrl } from '../../public-address.js';
import { activeRoutes, isReady, latestReady } from './status.js';
import { conditionsOf, specOf, type RevisionRow, type ServiceRow } from './store.js';
import { effectiveConcurrency, effectiveMaxScale } from './validate.js';

/** Local public address (DESIGN.md: http on the daemon's port under apps.localhost). */
export const publicUrl = (config: DaemonConfig, name: string, short: string) => workloadUrl(config, `${name}-${short}`);
/** A tag's own address: Knative's <tag>-<name> form under the same domain. */
export const tagUrl = (config: DaemonConfig, tag: string, name: string, short: string) => workloadUrl(config, `${tag}-${name}-${short}`);
/** On the internal loopback listener, in path form: workloads cannot resolve *.localhost names. */
export function internalUrl(config: DaemonConfig, short: string, name: string): string {
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  return `http://${host}:${config.internalPort}/services/${short}/${name}`;
}

export function activeTraffic(config: DaemonConfig, s: ServiceRow, short: string, revs: RevisionRow[]): ActiveTraffic[] {
  return activeRoutes(specOf(s), revs).map((r) => ({
    revision_name: r.revision,
    percent: r.percent,
    ...(r.tag !== undefined ? { tag: r.tag, url: tagUrl(config, r.tag, s.name, short) } : {}),
  }));
}

export function serviceView(config: DaemonConfig, s: ServiceRow, short: string, revs: RevisionRow[]): ServiceView {
  const spec = specOf(s);
  const ready = s.state === 'ready';
  const lr = latestReady(revs);
  return {
    name: s.name,
    project: `projects/${short}/services/${s.name}`,
    image: spec.image,
    ...(spec.command !== undefined ? { command: spec.command } : {}),
    ...(spec.args !== undefined ? { args: spec.args } : {}),
    env: spec.env,
    env_from: spec.env_from,
    ports: spec.ports,
    resources: spec.resources,
    scaling: spec.scaling,
    publish: spec.publish,
    traffic: spec.traffic,
    runtime_class_name: spec.runtime_class_name,
    service_account_name: spec.service_account_name,
    timeout_seconds: spec.timeout_seconds,
    created_at: s.created_at,
    updated_at: s.updated_at,
    state: s.state,
    ready,
    ...(!ready && s.message ? { message: s.message } : {}),
    url: publicUrl(config, s.name, short),
    internal_url: internalUrl(config, short, s.name),
    published: spec.publish.enabled,
    ...(lr ? { latest_ready_revision: lr.name } : {}),
    latest_created_revision: s.latest_created,
    active_traffic: activeTraffic(config, s, short, revs),
    conditions: conditionsOf(s),
    generation: s.generation,
    observed_generation: s.observed_generation,
  };
}

/** A revision's share of the served split and its tag (the first tag routed to it). */
function share(traffic: ActiveTraffic[], name: string) {
  const mine = traffic.filter((t) => t.revision_name === name);
  const tagged = mine.find((t) => t.tag !== undefined);
  return { percent: mine.reduce((n, t) => n + t.percent, 0), ...(tagged ? { tag: tagged.tag, url: tagged.url } : {}) };
}

/** `replicas` live from the data plane: a revision it does not run (out of the split) has none. */
export function revisionViews(config: DaemonConfig, s: ServiceRow, short: string, revs: RevisionRow[], live: Map<string, number>): RevisionView[] {
  const traffic = activeTraffic(config, s, short, revs);
  return revs.map((r) => {
    const sh = share(traffic, r.name);
    const ready = isReady(r);
    return {
      name: r.name,
      generation: r.generation,
      image: (JSON.parse(r.template) as { image: string }).image,
      state: ready ? 'ready' : r.state,
      ready,
      ...(r.reason ? { reason: r.reason } : {}),
      ...(r.message ? { message: r.message } : {}),
      replicas: live.get(r.name) ?? 0,
      created_at: r.created_at,
      traffic_percent: sh.percent,
      ...(sh.tag !== undefined ? { tag: sh.tag, url: sh.url } : {}),
    };
  });
}

export function metricsView(config: DaemonConfig, s: ServiceRow, short: string, revs: RevisionRow[], live: Map<string, number>): MetricsView {
  const spec = specOf(s);
  const views = revisionViews(config, s, short, revs, live);
  const current = views.reduce((n, r) => n + r.replicas, 0);
  const ready = s.state === 'ready';
  const readyCond = conditionsOf(s).find((c) => c.type === 'Ready');
  const lr = latestReady(revs)?.name;
  return {
    service: s.name,
    instances: { current, desired: current },
    revisions: views.map((r) => ({
      name: r.name,
      generation: r.generation,
      replicas: r.replicas,
      state: r.state,
      ready: r.ready,
      traffic_percent: r.traffic_percent,
      latest_ready: r.name === lr,
      latest_created: r.name === s.latest_created,
    })),
    state: s.state,
    ready,
    readiness: {
      state: s.state,
      ready,
      ...(readyCond?.reason ? { reason: readyCond.reason } : {}),
      ...(!ready && s.message ? { message: s.message } : {}),
      last_transition_time: s.state_changed_at,
    },
    scaling: {
      min_scale: spec.scaling.min_scale,
      max_scale: effectiveMaxScale(spec.scaling.max_scale),
      container_concurrency: effectiveConcurrency(spec.scaling.container_concurrency),
    },
    note:
      current === 0
        ? 'live readout, no history: no instance is running (scaled to zero); the next request starts one'
        : `live readout, no history: ${current} instance${current === 1 ? '' : 's'} running`,
  };
}
