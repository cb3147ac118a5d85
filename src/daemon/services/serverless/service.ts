import type { PageQuery } from '../../../api/common.js';
import {
  IF_MATCH_HEADER,
  LOG_TAIL_MAX,
  PORT_DEFAULT,
  RESOURCES_DEFAULT,
  SCALING_DEFAULTS,
  SOURCE_IMAGE_RE,
  TIMEOUT_DEFAULT,
  type ServiceCreateBody,
  type ServicePatchBody,
  type SetTrafficBody,
} from '../../../api/serverless.js';
import type { AreaContext } from '../../area.js';
import { isoNow } from '../../clock.js';
import { ApiError, badRequest, conflict, notFound } from '../../http/errors.js';
import { Reply } from '../../http/router.js';
import { newId } from '../../ids.js';
import { tx } from '../../store/db.js';
import type { Principal } from '../auth/principal.js';
import type { ProjectAccess } from '../accounts/access.js';
import { accessProject } from '../accounts/projects.js';
import { servicesRefusal } from '../accounts/quota-use.js';
import { nameTaken } from '../../names-in-use.js';
import { serviceManifest } from './knative.js';
import type { DataPlane } from './plane.js';
import { openSecretEnv, readEnvFrom, revisionName, sameValues, sealSecretEnv, templateOf } from './revisions.js';
import { refresh } from './reconcile.js';
import { QUOTA_REASON, serverlessStore as store, specOf, type RevisionRow, type ServiceRow, type StoredSpec, type Template } from './store.js';
import {
  checkEnv,
  checkEnvFrom,
  checkImage,
  checkName,
  checkPorts,
  checkResources,
  checkScaling,
  checkTimeout,
  mergeScaling,
} from './validate.js';
import { checkTraffic } from '../../traffic/check.js';
import { metricsView, revisionViews, serviceView } from './view.js';

export interface Deps {
  ctx: AreaContext;
  plane: DataPlane;
  /** Pushes the desired state of one service to the data plane (after every change). */
  reconcile(serviceId: string): void;
}

const member = (d: Deps, p: Principal, ref: string): ProjectAccess => accessProject(d.ctx, p, ref, 'member');

export const serviceNotFound = (name: string) => notFound(`service ${name} not found`);

function serviceOr404(d: Deps, projectId: string, name: string): ServiceRow {
  const s = store.byName(d.ctx.db, projectId, name);
  if (!s) throw serviceNotFound(name);
  return s;
}

/** The generation as an entity tag: a client sends it back in If-Match to patch only that version. */
const etag = (s: ServiceRow) => ({ ETag: `"${s.generation}"` });

function view(d: Deps, s: ServiceRow, short: string) {
  return serviceView(d.ctx.config, s, short, store.revisions(d.ctx.db, s.id));
}

/** A source reference must name this project's short and an archive uploaded to it. */
function checkSource(d: Deps, access: ProjectAccess, image: string): void {
  const m = SOURCE_IMAGE_RE.exec(image);
  if (!m) return;
  if (m[1] !== access.project.short || !store.source(d.ctx.db, access.project.id, m[2]!)) {
    throw badRequest(`rejected by the platform: image ${image} is not a source uploaded to this project (POST .../services/sources first)`);
  }
}

const structured = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

/** POST services: 202 with the service; its first revision <name>-00001 is handed to the data plane. */
export function create(d: Deps, principal: Principal, ref: string, body: ServiceCreateBody) {
  const access = member(d, principal, ref);
  const { db, clock } = d.ctx;
  const projectId = access.project.id;
  const name = checkName(body.name);
  const image = checkImage(body.image);
  checkSource(d, access, image);
  checkEnv(body.env);
  checkEnvFrom(body.env_from);
  const ports = checkPorts(body.ports) ?? [{ name: 'http1', container_port: PORT_DEFAULT }];
  checkResources(body.resources);
  const scaling = mergeScaling(SCALING_DEFAULTS, body.scaling);
  checkScaling(scaling);
  const first = revisionName(name, 1);
  const traffic = checkTraffic(body.traffic ?? [{ latest_revision: true, percent: 100 }], name, (r) => r === first);
  const spec: StoredSpec = {
    image,
    ...(body.command !== undefined ? { command: body.command } : {}),
    ...(body.args !== undefined ? { args: body.args } : {}),
    env: body.env ?? {},
    env_from: body.env_from ?? [],
    ports,
    // Spec 2 §4.3: the default resources apply only when none are sent.
    resources: structured(body.resources ?? RESOURCES_DEFAULT),
    scaling,
    publish: { enabled: body.publish?.enabled ?? false, ...(body.publish?.host !== undefined ? { host: body.publish.host } : {}) },
    traffic,
    runtime_class_name: body.runtime_class_name ?? '',
    service_account_name: body.service_account_name ?? '',
    timeout_seconds: checkTimeout(body.timeout_seconds) ?? TIMEOUT_DEFAULT,
  };
  const exists = () => conflict(`service ${name} already exists in this project`);
  if (store.byName(db, projectId, name)) throw exists();
  const taken = nameTaken(d.ctx, projectId, name);
  if (taken) throw conflict(`${name} is already the name of ${taken} in this project, and both would answer at the same address; choose another name`);
  const secretEnv = readEnvFrom(d.ctx, projectId, spec.env_from);
  const id = newId();
  const now = isoNow(clock);
  const row = tx(db, () => {
    if (store.byName(db, projectId, name)) throw exists();
    const s: ServiceRow = {
      id,
      project_id: projectId,
      name,
      spec: JSON.stringify(spec),
      generation: 1,
      observed_generation: 0,
      latest_created: first,
      next_seq: 2,
      conditions: '[]',
      state: 'pending',
      message: '',
      state_changed_at: now,
      invalid: '',
      created_at: now,
      updated_at: now,
    };
    store.insert(db, s);
    store.insertRevision(db, newRevision(d, s, first, 1, spec, secretEnv, now));
    return refresh(d.ctx, s.id)!;
  });
  d.reconcile(id);
  return new Reply(202, view(d, store.byId(db, id) ?? row, access.project.short), etag(row));
}

/**
 * A new revision, inside the caller's transaction. Spec 1 §8.3: every revision holds two Services
 * entries for good, and once the quota is full new revisions stop becoming ready: one that does not
 * fit is recorded not_ready (QUOTA_REASON), never handed to the data plane, and holds nothing.
 */
function newRevision(d: Deps, s: ServiceRow, name: string, seq: number, spec: StoredSpec, secretEnv: Record<string, string>, now: string): RevisionRow {
  const refusal = servicesRefusal(d.ctx, s.project_id, 2);
  return {
    service_id: s.id,
    name,
    seq,
    generation: s.generation,
    template: JSON.stringify(templateOf(spec)),
    secret_env: sealSecretEnv(d.ctx, s.id, name, secretEnv),
    state: refusal ? 'not_ready' : 'unknown',
    reason: refusal ? QUOTA_REASON : '',
    message: refusal ? `${refusal}: this revision will not become ready; delete a service or an agent, then change the service again` : '',
    replicas: 0,
    ready_at: null,
    created_at: now,
    network: '',
  };
}

export function list(d: Deps, principal: Principal, ref: string, query: PageQuery) {
  const access = member(d, principal, ref);
  const page = d.ctx.pager.parse(query, `services:${access.project.id}`);
  const { items, next_page_token } = d.ctx.pager.slice(page, store.list(d.ctx.db, access.project.id, page.size + 1, page.offset));
  return { services: items.map((s) => view(d, s, access.project.short)), ...(next_page_token ? { next_page_token } : {}) };
}

export function get(d: Deps, principal: Principal, ref: string, name: string) {
  const access = member(d, principal, ref);
  const s = serviceOr404(d, access.project.id, name);
  return new Reply(200, view(d, s, access.project.short), etag(s));
}

/** If-Match: the generation the client read, bare or quoted ("3", W/"3" and * accepted). */
export function expectedGeneration(header: string | string[] | undefined): number | undefined {
  if (header === undefined) return undefined;
  const v = (Array.isArray(header) ? header[0]! : header).trim();
  if (v === '*') return undefined;
  const m = /^(?:W\/)?"?(\d{1,15})"?$/.exec(v);
  if (!m) throw badRequest(`invalid ${IF_MATCH_HEADER} header: send the service's generation (for example ${IF_MATCH_HEADER}: "3")`);
  return Number(m[1]);
}

const staleConflict = (s: ServiceRow, expected: number) =>
  conflict(`concurrent modification: the service is at generation ${s.generation}, this update was made against generation ${expected}; re-read and retry`);

/**
 * PATCH: sparse (omitted fields untouched, explicit zero sets zero, scaling merged onto the
 * current values). A change of the template, or of a value env_from reads, creates a revision;
 * a no-op patch changes nothing (not even the generation).
 */
export function patch(d: Deps, principal: Principal, ref: string, name: string, body: ServicePatchBody, ifMatch: number | undefined) {
  const access = member(d, principal, ref);
  const { db, clock } = d.ctx;
  const s0 = serviceOr404(d, access.project.id, name);
  if (ifMatch !== undefined && ifMatch !== s0.generation) throw staleConflict(s0, ifMatch);
  if (body.name !== undefined && body.name !== name) throw badRequest(`invalid name: a service cannot be renamed (name must be ${name} or omitted)`);
  const cur = specOf(s0);
  const next: StoredSpec = structured(cur);
  if (body.image !== undefined) {
    next.image = checkImage(body.image);
    checkSource(d, access, next.image);
  }
  if (body.command !== undefined) next.command = body.command;
  if (body.args !== undefined) next.args = body.args;
  if (body.env !== undefined) {
    checkEnv(body.env);
    next.env = body.env;
  }
  if (body.env_from !== undefined) {
    checkEnvFrom(body.env_from);
    next.env_from = body.env_from;
  }
  if (body.ports !== undefined) next.ports = checkPorts(body.ports)!;
  if (body.resources !== undefined) {
    checkResources(body.resources);
    next.resources = body.resources;
  }
  if (body.scaling !== undefined) {
    next.scaling = mergeScaling(cur.scaling, body.scaling);
    checkScaling(next.scaling);
  }
  if (body.publish !== undefined) {
    next.publish = { enabled: body.publish.enabled ?? cur.publish.enabled, ...((body.publish.host ?? cur.publish.host) !== undefined ? { host: body.publish.host ?? cur.publish.host } : {}) };
  }
  if (body.runtime_class_name !== undefined) next.runtime_class_name = body.runtime_class_name;
  if (body.service_account_name !== undefined) next.service_account_name = body.service_account_name;
  if (body.timeout_seconds !== undefined) next.timeout_seconds = checkTimeout(body.timeout_seconds)!;
  // Each patch re-reads the secrets env_from names (a changed one needs a new revision). While the
  // secret store cannot be read, a patch that leaves the template alone still applies.
  let secretEnv: Record<string, string> | undefined;
  try {
    secretEnv = readEnvFrom(d.ctx, access.project.id, next.env_from);
  } catch (e) {
    if (!(e instanceof ApiError && e.status === 503) || body.env_from !== undefined) throw e;
  }
  const changed = tx(db, () => {
    const s = store.byId(db, s0.id);
    if (!s) throw serviceNotFound(name);
    if (ifMatch !== undefined && ifMatch !== s.generation) throw staleConflict(s, ifMatch);
    const latest = store.revision(db, s.id, s.latest_created)!;
    const templateChanged = JSON.stringify(templateOf(next)) !== latest.template;
    if (secretEnv === undefined && templateChanged && next.env_from.length) {
      throw new ApiError(503, 'the project secret store is unreachable, so env_from cannot be read for a new revision; try again');
    }
    const newTemplate = templateChanged || (secretEnv !== undefined && !sameValues(secretEnv, openSecretEnv(d.ctx, latest)));
    const newName = newTemplate ? revisionName(name, s.next_seq) : undefined;
    if (body.traffic !== undefined) next.traffic = checkTraffic(body.traffic, name, (r) => r === newName || Boolean(store.revision(db, s.id, r)));
    if (!newTemplate && JSON.stringify(next) === s.spec) return false;
    const now = isoNow(clock);
    const updated: ServiceRow = { ...s, spec: JSON.stringify(next), generation: s.generation + 1, updated_at: now };
    if (newName) {
      updated.latest_created = newName;
      updated.next_seq = s.next_seq + 1;
      store.insertRevision(db, newRevision(d, updated, newName, s.next_seq, next, secretEnv ?? {}, now));
    }
    store.update(db, updated);
    refresh(d.ctx, s.id);
    return true;
  });
  if (changed) d.reconcile(s0.id);
  const s = store.byId(db, s0.id)!;
  return new Reply(200, view(d, s, access.project.short), etag(s));
}

/** POST :set-traffic: replaces the whole split; 202 (accepted, not yet serving). */
export function setTraffic(d: Deps, principal: Principal, ref: string, name: string, body: SetTrafficBody) {
  const access = member(d, principal, ref);
  const { db, clock } = d.ctx;
  const s0 = serviceOr404(d, access.project.id, name);
  if (body.traffic === undefined) throw badRequest('traffic is required: send the complete split, for example {"traffic":[{"latest_revision":true,"percent":100}]}');
  const changed = tx(db, () => {
    const s = store.byId(db, s0.id);
    if (!s) throw serviceNotFound(name);
    const traffic = checkTraffic(body.traffic!, name, (r) => Boolean(store.revision(db, s.id, r)));
    const spec = specOf(s);
    if (JSON.stringify(spec.traffic) === JSON.stringify(traffic)) return false;
    store.update(db, { ...s, spec: JSON.stringify({ ...spec, traffic }), generation: s.generation + 1, updated_at: isoNow(clock) });
    refresh(d.ctx, s.id);
    return true;
  });
  if (changed) d.reconcile(s0.id);
  const s = store.byId(db, s0.id)!;
  return new Reply(202, view(d, s, access.project.short), etag(s));
}

/** DELETE (project admin): rows, revisions and instances go; the public hostname is released. */
export async function remove(d: Deps, principal: Principal, ref: string, name: string) {
  const access = accessProject(d.ctx, principal, ref, 'resource-admin');
  const s = serviceOr404(d, access.project.id, name);
  store.remove(d.ctx.db, s.id);
  try {
    await d.plane.remove(s.id);
  } catch (e) {
    // The rows are gone, so the service is: what the data plane could not stop now, its
    // start-up sweep of leftovers stops on the next start.
    d.ctx.log.error('serverless data plane remove failed', { service: s.id, error: String((e as Error)?.message ?? e) });
  }
  return new Reply(204, undefined);
}

const liveReplicas = (d: Deps, s: ServiceRow) => new Map(d.plane.instances(s.id).map((i) => [i.revision, i.replicas]));

export function revisions(d: Deps, principal: Principal, ref: string, name: string) {
  const access = member(d, principal, ref);
  const s = serviceOr404(d, access.project.id, name);
  return { revisions: revisionViews(d.ctx.config, s, access.project.short, store.revisions(d.ctx.db, s.id), liveReplicas(d, s)) };
}

export function metrics(d: Deps, principal: Principal, ref: string, name: string) {
  const access = member(d, principal, ref);
  const s = serviceOr404(d, access.project.id, name);
  return metricsView(d.ctx.config, s, access.project.short, store.revisions(d.ctx.db, s.id), liveReplicas(d, s));
}

export function spec(d: Deps, principal: Principal, ref: string, name: string) {
  const access = member(d, principal, ref);
  const s = serviceOr404(d, access.project.id, name);
  const short = access.project.short;
  const revs = store.revisions(d.ctx.db, s.id);
  const yaml = serviceManifest(
    serviceView(d.ctx.config, s, short, revs),
    revs.map((r) => ({ name: r.name, generation: r.generation, template: JSON.parse(r.template) as Template })),
  );
  return {
    service: s.name,
    yaml,
    note: 'a Knative serving.knative.dev/v1 Service: platform-internal fields are removed and env values of secret-looking keys read ***REDACTED***; env_from values are never included',
  };
}

/** Spec 2 §8: tail 1 to 10000, default 500 (LOG_TAIL_LINES sets the default). */
export function logOptions(query: { tail?: string; follow?: string }, fallback: number): { tail: number; follow: boolean } {
  let tail = fallback;
  if (query.tail !== undefined) {
    tail = /^\d+$/.test(query.tail) ? Number(query.tail) : NaN;
    if (!(tail >= 1 && tail <= LOG_TAIL_MAX)) throw badRequest(`tail must be between 1 and ${LOG_TAIL_MAX}`);
  }
  if (query.follow !== undefined && !['true', 'false', '1', '0', ''].includes(query.follow)) throw badRequest('follow must be true or false');
  return { tail, follow: query.follow === 'true' || query.follow === '1' };
}

export async function logs(d: Deps, principal: Principal, ref: string, name: string, query: { tail?: string; follow?: string }, res: import('node:http').ServerResponse) {
  const access = member(d, principal, ref);
  const s = serviceOr404(d, access.project.id, name);
  const opts = logOptions(query, d.ctx.config.workloads.logTailLines);
  await d.plane.logs(s.id, opts, res);
}
