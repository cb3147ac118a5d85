import { triggerRoutes, type FiringView, type TriggerView } from '../../../api/triggers.js';
import type { StatusTarget } from '../loaders.js';
import { linesOf, oneLine, relative, settle, when } from './read.js';

/** Deliveries listed: the route keeps a bounded history, newest first. */
const FIRINGS_SHOWN = 10;

function sourceLines(s: TriggerView['source']): string[] {
  if (s.schedule) return [`schedule ${s.schedule.cron} · time zone ${s.schedule.time_zone}`, ...(s.schedule.payload ? [`payload ${oneLine(s.schedule.payload)}`] : [])];
  if (s.pubsub) return [`topic ${s.pubsub.topic} · subscription ${s.pubsub.subscription}`];
  if (s.objectstore) return [`bucket ${s.objectstore.bucket}${s.objectstore.prefix ? ` · prefix ${s.objectstore.prefix}` : ' · every key'}`];
  return [];
}

function firingLine(f: FiringView): string {
  const how = [f.http_status ? `HTTP ${f.http_status}` : '', `${f.attempts} attempt${f.attempts === 1 ? '' : 's'}`, f.duration_ms !== undefined ? `${Math.round(f.duration_ms)} ms` : '', f.manual ? 'fired by hand' : '', f.catch_up ? 'catch-up' : '']
    .filter(Boolean)
    .join(', ');
  return `  ${when(f.actual_time ?? f.scheduled_time)}  ${f.status.padEnd(13)} ${how}${f.error ? `  ${oneLine(f.error)}` : ''}`;
}

/**
 * A trigger: its kind, target, source (schedule and time zone, topic or bucket), whether it is
 * enabled, retries, the next run of a schedule and the last deliveries with status and time.
 * Triggers have no paused state: one that exists fires, so enabled is always yes.
 */
export async function triggerDetails(t: StatusTarget, name: string): Promise<string[]> {
  const got = await settle(t.client.call(triggerRoutes.get, { params: { projectID: t.project, name } }));
  return linesOf(`trigger ${name}`, got, (tr) => {
    const firings = tr.firings ?? [];
    return [
      `trigger ${tr.name}: ${tr.source.type} · enabled yes (a trigger fires while it exists; delete it to stop)`,
      `target ${tr.target.kind} ${tr.target.service} · path ${tr.target.path}`,
      ...sourceLines(tr.source),
      `retry up to ${tr.retry.max_attempts} attempts · backoff ${tr.retry.backoff.initial_seconds}s ×${tr.retry.backoff.multiplier} up to ${tr.retry.backoff.maximum_seconds}s`,
      `next run ${tr.next_fire_time ? `${when(tr.next_fire_time)} UTC (${relative(tr.next_fire_time)})` : tr.source.type === 'schedule' ? 'none' : `on each ${tr.source.type === 'pubsub' ? 'message' : 'object'}`}`,
      '',
      `last deliveries (newest first, ${firings.length ? `${Math.min(firings.length, FIRINGS_SHOWN)} of ${firings.length}, times in UTC` : 'none yet'}):`,
      ...firings.slice(0, FIRINGS_SHOWN).map(firingLine),
    ];
  });
}
