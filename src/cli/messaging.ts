import type { SubscriptionView, TopicView } from '../api/messaging.js';
import { AbortError, UsageError } from '../client/errors.js';
import { getContext } from '../client/contexts.js';
import { BaseCommand } from './base-command.js';
import type { Column } from './render.js';

/** Shared pieces of the messaging commands (topics, subscriptions, publish, pull, ack, pubsub). */

export { projectFlag } from './project-flag.js';

export abstract class ProjectCommand extends BaseCommand {
  /** --project, else the context's project; the local context falls back to project `default`. */
  protected project(flag: string | undefined, context?: string): string {
    try {
      return this.projectRef(flag, context);
    } catch (e) {
      if (e instanceof AbortError && getContext(context).kind === 'local') return 'default';
      throw e;
    }
  }
}

/**
 * Subscriptions live under topics and the API has no project-wide subscription lookup, so a
 * subscription is named `TOPIC/SUB` (or SUB with --topic).
 */
export function subRef(ref: string, topic?: string): { topic: string; sub: string } {
  const i = ref.indexOf('/');
  if (i > 0) return { topic: ref.slice(0, i), sub: ref.slice(i + 1) };
  if (topic) return { topic, sub: ref };
  throw new UsageError(`cannot tell the topic of subscription ${ref}`, 'name it as TOPIC/SUB or pass --topic TOPIC');
}

export const topicColumns: Column<TopicView>[] = [
  { header: 'name', get: (t) => t.name },
  { header: 'state', get: (t) => t.state },
  { header: 'max bytes', get: (t) => t.max_bytes },
  { header: 'max age', get: (t) => t.max_age },
  { header: 'discard', get: (t) => t.discard },
  { header: 'subs', get: (t) => t.stats.subscriptions },
  { header: 'published', get: (t) => t.stats.published },
  { header: 'backlog bytes', get: (t) => t.stats.backlog_bytes },
];

export const subColumns: Column<SubscriptionView>[] = [
  { header: 'name', get: (s) => s.name },
  { header: 'type', get: (s) => s.type },
  { header: 'state', get: (s) => s.state },
  { header: 'deliver', get: (s) => (s.deliver.push ? `push ${s.deliver.push.url}` : 'pull') },
  { header: 'deadline', get: (s) => `${s.ack_deadline_seconds}s` },
  { header: 'backlog', get: (s) => s.stats.backlog },
  { header: 'unacked', get: (s) => s.stats.unacknowledged },
  { header: 'consumers', get: (s) => s.stats.consumers },
];

/** Flattens a resource for the key-value view: stats and nested objects inline. */
export function flat(obj: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) {
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      for (const [k2, v2] of Object.entries(flat(v as Record<string, unknown>))) out[`${k}.${k2}`] = v2;
    } else out[k] = v;
  }
  return out;
}

/** `k=v` pairs of repeated --attr flags. */
export function parseAttrs(pairs: string[] = []): Record<string, string> | undefined {
  if (!pairs.length) return undefined;
  const out: Record<string, string> = {};
  for (const p of pairs) {
    const i = p.indexOf('=');
    if (i <= 0) throw new UsageError(`--attr ${p} is not NAME=VALUE`);
    out[p.slice(0, i)] = p.slice(i + 1);
  }
  return out;
}
