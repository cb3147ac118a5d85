import { Args, Flags } from '@oclif/core';
import type { FiringView, TriggerView } from '../api/triggers.js';
import { sourceSummary } from '../client/triggers.js';
import type { Column } from './render.js';

/** Shared pieces of the `platform triggers` and `platform objects` commands (spec 2 §2.4, §4.4). */

export const triggerArg = Args.string({ description: 'trigger name', required: true });
export const bucketArg = Args.string({ description: 'bucket name (a folder under the state directory)', required: true });

/** Source and retry flags; on update every one is optional and only those given are sent. */
export function triggerFlags(o: { update?: boolean } = {}) {
  return {
    target: Flags.string({ description: 'service, function or agent of the project that receives the POST', required: !o.update }),
    path: Flags.string({ description: 'path POSTed to (default /; /invoke for an agent)' }),
    cron: Flags.string({ description: "schedule: five cron fields, e.g. '0 3 * * *' (or six with seconds first)" }),
    tz: Flags.string({ description: 'with --cron: IANA time zone (default UTC)' }),
    payload: Flags.string({ description: 'with --cron: JSON body delivered unchanged' }),
    topic: Flags.string({ description: 'pubsub: fire for each message of this topic' }),
    subscription: Flags.string({ description: 'with --topic: consume this existing pull subscription (default: the trigger makes its own)' }),
    bucket: Flags.string({ description: 'objectstore: fire when an object arrives in this bucket' }),
    prefix: Flags.string({ description: 'with --bucket: only keys starting with this' }),
    'max-attempts': Flags.integer({ description: 'attempts in all, 1-100 (default 3)', min: 1, max: 100 }),
    backoff: Flags.string({ description: 'retry waits INITIAL[,MAXIMUM[,MULTIPLIER]] in seconds (default 1,60,2)' }),
  };
}

export const triggerColumns: Column<TriggerView>[] = [
  { header: 'name', get: (t) => t.name },
  { header: 'target', get: (t) => `${t.target.service}${t.target.path === '/' ? '' : t.target.path} (${t.target.kind})` },
  { header: 'source', get: (t) => sourceSummary(t) },
  { header: 'next fire', get: (t) => t.next_fire_time ?? '-' },
];

export const firingColumns: Column<FiringView>[] = [
  { header: 'scheduled', get: (f) => f.scheduled_time },
  { header: 'actual', get: (f) => f.actual_time ?? '-' },
  { header: 'attempts', get: (f) => String(f.attempts) },
  { header: 'status', get: (f) => `${f.status}${f.http_status ? ` (${f.http_status})` : ''}${f.catch_up ? ' catch-up' : ''}${f.manual ? ' manual' : ''}` },
  { header: 'duration', get: (f) => (f.duration_ms !== undefined ? `${f.duration_ms} ms` : '-') },
  { header: 'error', get: (f) => f.error?.slice(0, 120) },
];

export function triggerFields(t: TriggerView): Record<string, unknown> {
  return {
    name: t.name,
    target: `${t.target.service} ${t.target.path} (${t.target.kind})`,
    source: sourceSummary(t),
    payload: t.source.schedule?.payload,
    next_fire: t.next_fire_time,
    retry: `${t.retry.max_attempts} attempts, backoff ${t.retry.backoff.initial_seconds} s x${t.retry.backoff.multiplier} up to ${t.retry.backoff.maximum_seconds} s`,
    created: t.created_at,
  };
}
