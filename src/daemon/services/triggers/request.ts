import type { FiringRow, TriggerRow } from './store.js';

export const CE_TYPES = {
  schedule: 'ai.platform.trigger.schedule.v1',
  objectstore: 'ai.platform.trigger.objectstore.v1',
  /** A firing made with :fire (no schedule run, object or message behind it). */
  manual: 'ai.platform.trigger.manual.v1',
} as const;
/** Names the trigger on every delivery, whatever the target. */
export const TRIGGER_HEADER = 'x-platform-trigger';

/**
 * The POST of one attempt of a schedule or object firing. To a function or a service it is a
 * binary-mode CloudEvent (spec 1 §6.1, §6.2: ce-id present, the payload unchanged as the body);
 * ce-id names the firing, so every retry carries the same id and a receiver can deduplicate. An
 * agent's /invoke is not an event sink: it gets the payload alone.
 */
export function deliveryHeaders(t: TriggerRow, short: string, f: FiringRow, contentType: string): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': contentType, [TRIGGER_HEADER]: `projects/${short}/triggers/${t.name}` };
  if (t.target_kind === 'agent') return headers;
  headers['ce-specversion'] = '1.0';
  headers['ce-id'] = `${t.id}:${f.id}`;
  headers['ce-type'] = f.manual ? CE_TYPES.manual : t.source_type === 'objectstore' ? CE_TYPES.objectstore : CE_TYPES.schedule;
  headers['ce-source'] = `//platform.local/projects/${short}/triggers/${t.name}`;
  headers['ce-time'] = new Date(f.scheduled_at).toISOString();
  headers['ce-deliveryattempt'] = String(f.attempts);
  if (f.object_key) headers['ce-subject'] = encodeURI(f.object_key);
  return headers;
}
