import type { FiringView, TriggerView } from '../../../api/triggers.js';
import { retryOf, sourceOf, type FiringRow, type TriggerRow } from './store.js';

const iso = (ms: number) => new Date(ms).toISOString();

export function triggerView(t: TriggerRow, short: string, firings?: FiringRow[]): TriggerView {
  const src = sourceOf(t);
  return {
    name: t.name,
    project: `projects/${short}/triggers/${t.name}`,
    target: { service: t.target_service, path: t.target_path, kind: t.target_kind },
    source: {
      type: t.source_type,
      ...(src.schedule ? { schedule: src.schedule } : {}),
      ...(src.pubsub ? { pubsub: { topic: src.pubsub.topic, subscription: src.pubsub.subscription } } : {}),
      ...(src.objectstore ? { objectstore: src.objectstore } : {}),
    },
    retry: retryOf(t),
    ...(t.next_fire_at !== null ? { next_fire_time: iso(t.next_fire_at) } : {}),
    created_at: t.created_at,
    updated_at: t.updated_at,
    ...(firings ? { firings: firings.map(firingView) } : {}),
  };
}

export function firingView(f: FiringRow): FiringView {
  return {
    id: String(f.id),
    scheduled_time: iso(f.scheduled_at),
    ...(f.first_attempt_at !== null ? { actual_time: iso(f.first_attempt_at) } : {}),
    attempts: f.attempts,
    status: f.status,
    ...(f.http_status !== null ? { http_status: f.http_status } : {}),
    ...(f.finished_at !== null && f.first_attempt_at !== null ? { duration_ms: f.finished_at - f.first_attempt_at } : {}),
    ...(f.error ? { error: f.error } : {}),
    ...(f.catch_up ? { catch_up: true } : {}),
    ...(f.manual ? { manual: true } : {}),
  };
}
