import { TRIGGER_NAME_MAX, TRIGGER_NAME_RE, type SourceInput, type TriggerCreateBody, type TriggerPatchBody } from '../../../api/triggers.js';
import type { PageQuery } from '../../../api/common.js';
import type { AreaContext } from '../../area.js';
import { isoNow } from '../../clock.js';
import { badRequest, conflict, notFound, unavailable } from '../../http/errors.js';
import { Reply } from '../../http/router.js';
import { newId } from '../../ids.js';
import { tx } from '../../store/db.js';
import type { Principal } from '../auth/principal.js';
import { accessProject } from '../accounts/projects.js';
import type { TriggerClock } from './clock.js';
import type { TriggersConfig } from './config.js';
import type { Deliverer } from './deliverer.js';
import { checkBucket } from './objects.js';
import type { PubsubSource } from './pubsub-source.js';
import { resolveRetry } from './retry.js';
import { parseSchedule } from './schedule.js';
import type { Scheduler } from './scheduler.js';
import { sourceOf, triggerStore as store, type StoredSource, type TriggerRow } from './store.js';
import { defaultPath, resolveTarget } from './targets.js';
import { firingView, triggerView } from './view.js';

export interface Deps {
  ctx: AreaContext;
  clock: TriggerClock;
  cfg: TriggersConfig;
  scheduler: Scheduler;
  deliverer: Deliverer;
  pubsub: PubsubSource;
}

const member = (d: Deps, p: Principal, ref: string) => accessProject(d.ctx, p, ref, 'member');

export const triggerNotFound = (name: string) => notFound(`trigger ${name} not found`);

function triggerOr404(d: Deps, projectId: string, name: string): TriggerRow {
  const t = store.byName(d.ctx.db, projectId, name);
  if (!t) throw triggerNotFound(name);
  return t;
}

/** Spec 2 §4.4: the same rule as a service name (1 to 52 characters). */
function checkName(name: string): string {
  if (!TRIGGER_NAME_RE.test(name) || name.length > TRIGGER_NAME_MAX) {
    throw badRequest(`invalid name ${JSON.stringify(name)}: 1 to ${TRIGGER_NAME_MAX} lowercase letters, digits and hyphens, starting with a letter and not ending with a hyphen`);
  }
  return name;
}

function checkPath(path: string): string {
  if (!path.startsWith('/') || path.length > 1024 || /[\s#\\]/.test(path) || /(^|\/)\.\.?(\/|$)/.test(path)) {
    throw badRequest(`invalid target.path ${JSON.stringify(path)}: an absolute path such as / or /invoke, without spaces, #, . or .. segments`);
  }
  return path;
}

/** Validates the source sub-object of its type; pubsub's subscription is resolved by the caller. */
function checkSource(src: SourceInput): StoredSource {
  const others = (['schedule', 'pubsub', 'objectstore'] as const).filter((k) => k !== src.type && src[k] !== undefined);
  if (others.length) throw badRequest(`source.${others[0]} is set while source.type is ${src.type}: send only source.${src.type}`);
  if (src.type === 'schedule') {
    const s = src.schedule;
    if (!s) throw badRequest('source.schedule is required when source.type is schedule (cron, optional time_zone and payload)');
    const time_zone = s.time_zone ?? 'UTC';
    parseSchedule(s.cron, time_zone);
    if (s.payload !== undefined) {
      try {
        JSON.parse(s.payload);
      } catch {
        throw badRequest('source.schedule.payload must be JSON text (it is delivered unchanged as the POST body)');
      }
    }
    return { schedule: { cron: s.cron.trim(), time_zone, ...(s.payload !== undefined ? { payload: s.payload } : {}) } };
  }
  if (src.type === 'pubsub') {
    if (!src.pubsub) throw badRequest('source.pubsub is required when source.type is pubsub (topic, optional subscription)');
    return { pubsub: { topic: src.pubsub.topic, subscription: src.pubsub.subscription ?? '', owned: false } };
  }
  if (!src.objectstore) throw badRequest('source.objectstore is required when source.type is objectstore (bucket, optional prefix)');
  const bucket = checkBucket(src.objectstore.bucket, 'source.objectstore.bucket');
  const prefix = src.objectstore.prefix;
  if (prefix !== undefined && (prefix.startsWith('/') || prefix.split('/').some((s) => s === '..' || s === '.'))) throw badRequest('invalid source.objectstore.prefix: a relative key prefix without . or .. segments');
  return { objectstore: { bucket, ...(prefix ? { prefix } : {}) } };
}

/**
 * A pubsub source's subscription, through the messaging broker: the named pull subscription, or
 * one of the trigger's own (trigger-<name>) that is deleted with it. One trigger per subscription.
 */
function preparePubsub(d: Deps, projectId: string, name: string, src: NonNullable<StoredSource['pubsub']>, maxAttempts: number, self?: string): void {
  const hook = d.ctx.hooks.messagingConsumers;
  if (!hook) throw unavailable('messaging is not available in this daemon');
  if (src.subscription) {
    const other = store.bySource(d.ctx.db, 'pubsub').find((t) => t.project_id === projectId && t.id !== self && sourceOf(t).pubsub?.topic === src.topic && sourceOf(t).pubsub?.subscription === src.subscription);
    if (other) throw conflict(`subscription ${src.subscription} is already consumed by trigger ${other.name}`);
  }
  const r = hook.prepare(projectId, src.topic, src.subscription || undefined, `trigger-${name}`, maxAttempts);
  src.subscription = r.subscription;
  src.owned = r.created;
}

function releasePubsub(d: Deps, t: TriggerRow): void {
  d.pubsub.release(t.id);
  const src = sourceOf(t).pubsub;
  if (src?.owned) d.ctx.hooks.messagingConsumers?.remove(t.project_id, src.topic, src.subscription);
}

export function create(d: Deps, principal: Principal, ref: string, body: TriggerCreateBody) {
  const access = member(d, principal, ref);
  const { db } = d.ctx;
  const projectId = access.project.id;
  const name = checkName(body.name);
  const retry = resolveRetry(body.retry);
  const source = checkSource(body.source);
  const path = body.target.path !== undefined ? checkPath(body.target.path) : undefined;
  const kind = resolveTarget(d.ctx, projectId, body.target.service);
  if (store.byName(db, projectId, name)) throw conflict(`trigger ${name} already exists in this project`);
  if (source.pubsub) preparePubsub(d, projectId, name, source.pubsub, retry.max_attempts);
  const now = isoNow(d.clock);
  const row: TriggerRow = {
    id: newId(),
    project_id: projectId,
    name,
    target_service: body.target.service,
    target_path: path ?? defaultPath(kind),
    target_kind: kind,
    source_type: body.source.type,
    source: JSON.stringify(source),
    retry: JSON.stringify(retry),
    next_fire_at: null,
    created_at: now,
    updated_at: now,
  };
  row.next_fire_at = source.schedule ? d.scheduler.nextRun(row, d.clock.now()) : null;
  try {
    tx(db, () => {
      if (store.byName(db, projectId, name)) throw conflict(`trigger ${name} already exists in this project`);
      store.insert(db, row);
    });
  } catch (e) {
    if (source.pubsub?.owned) d.ctx.hooks.messagingConsumers?.remove(projectId, source.pubsub.topic, source.pubsub.subscription);
    throw e;
  }
  afterChange(d, row);
  return new Reply(202, triggerView(row, access.project.short));
}

/** Puts a created or changed trigger to work: its next run, its subscription. */
function afterChange(d: Deps, t: TriggerRow): void {
  if (t.source_type === 'schedule') d.scheduler.rearm();
  else d.scheduler.forget(t.id);
  if (t.source_type === 'pubsub') d.pubsub.attach(t);
}

export function list(d: Deps, principal: Principal, ref: string, query: PageQuery) {
  const access = member(d, principal, ref);
  const page = d.ctx.pager.parse(query, `triggers:${access.project.id}`);
  const { items, next_page_token } = d.ctx.pager.slice(page, store.list(d.ctx.db, access.project.id, page.size + 1, page.offset));
  return { triggers: items.map((t) => triggerView(t, access.project.short)), ...(next_page_token ? { next_page_token } : {}) };
}

export function get(d: Deps, principal: Principal, ref: string, name: string) {
  const access = member(d, principal, ref);
  const t = triggerOr404(d, access.project.id, name);
  return triggerView(t, access.project.short, store.history(d.ctx.db, t.id, d.cfg.historyLimit));
}

export function patch(d: Deps, principal: Principal, ref: string, name: string, body: TriggerPatchBody) {
  const access = member(d, principal, ref);
  const { db } = d.ctx;
  const cur = triggerOr404(d, access.project.id, name);
  if (body.name !== undefined && body.name !== name) throw badRequest(`invalid name: a trigger cannot be renamed (name must be ${name} or omitted)`);
  const next: TriggerRow = { ...cur };
  const retry = resolveRetry(body.retry, JSON.parse(cur.retry));
  next.retry = JSON.stringify(retry);
  if (body.target?.service !== undefined && body.target.service !== cur.target_service) {
    next.target_kind = resolveTarget(d.ctx, cur.project_id, body.target.service);
    next.target_service = body.target.service;
    if (body.target.path === undefined && cur.target_path === defaultPath(cur.target_kind)) next.target_path = defaultPath(next.target_kind);
  } else if (body.target?.service !== undefined) {
    resolveTarget(d.ctx, cur.project_id, cur.target_service); // still there?
  }
  if (body.target?.path !== undefined) next.target_path = checkPath(body.target.path);
  let newSource: StoredSource | undefined;
  if (body.source) {
    newSource = checkSource(body.source);
    const old = sourceOf(cur).pubsub;
    const same = newSource.pubsub && old && newSource.pubsub.topic === old.topic && (newSource.pubsub.subscription === '' || newSource.pubsub.subscription === old.subscription);
    if (same) newSource.pubsub = old;
    else if (newSource.pubsub) preparePubsub(d, cur.project_id, name, newSource.pubsub, retry.max_attempts, cur.id);
    next.source_type = body.source.type;
    next.source = JSON.stringify(newSource);
  }
  const src = sourceOf(next);
  const scheduleChanged = JSON.stringify(sourceOf(cur).schedule) !== JSON.stringify(src.schedule);
  if (!src.schedule) next.next_fire_at = null;
  else if (scheduleChanged) {
    d.scheduler.forget(cur.id);
    next.next_fire_at = d.scheduler.nextRun(next, d.clock.now());
  }
  next.updated_at = isoNow(d.clock);
  tx(db, () => store.update(db, next));
  // A subscription the trigger made follows its retry.max_attempts (a named one is its owner's).
  if (src.pubsub?.owned && retry.max_attempts !== JSON.parse(cur.retry).max_attempts) {
    d.ctx.hooks.messagingConsumers?.setMaxDeliver(cur.project_id, src.pubsub.topic, src.pubsub.subscription, retry.max_attempts);
  }
  const oldPubsub = sourceOf(cur).pubsub;
  if (oldPubsub && (!src.pubsub || src.pubsub.subscription !== oldPubsub.subscription || src.pubsub.topic !== oldPubsub.topic)) releasePubsub(d, cur);
  afterChange(d, next);
  return triggerView(next, access.project.short);
}

export function remove(d: Deps, principal: Principal, ref: string, name: string) {
  const access = member(d, principal, ref);
  const t = triggerOr404(d, access.project.id, name);
  tx(d.ctx.db, () => store.remove(d.ctx.db, t.id));
  d.scheduler.forget(t.id);
  d.scheduler.rearm();
  if (t.source_type === 'pubsub') releasePubsub(d, t);
  return new Reply(204, undefined);
}

/**
 * :fire queues one firing now, as the source would (testing): a schedule sends its payload; a
 * bucket trigger or a topic trigger sends an empty body, since there is no object or message.
 */
export function fire(d: Deps, principal: Principal, ref: string, name: string) {
  const access = member(d, principal, ref);
  const t = triggerOr404(d, access.project.id, name);
  const now = d.clock.now();
  const payload = sourceOf(t).schedule?.payload;
  const id = tx(d.ctx.db, () =>
    store.addFiring(d.ctx.db, {
      trigger_id: t.id,
      event_key: null,
      scheduled_at: now,
      body: payload !== undefined ? Buffer.from(payload, 'utf8') : null,
      object_key: null,
      catch_up: 0,
      manual: 1,
      status: 'pending',
      next_attempt_at: now,
    }),
  )!;
  d.deliverer.kick();
  return new Reply(202, firingView(store.firing(d.ctx.db, id)!));
}
