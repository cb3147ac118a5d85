import type { AgentView } from '../../api/agents.js';
import type { ServiceView } from '../../api/serverless.js';
import type { McpServer } from '../../api/mcp.js';
import type { TriggerView } from '../../api/triggers.js';
import type { Endpoint } from '../../api/gateway.js';
import type { SubscriptionView, TopicView } from '../../api/messaging.js';
import type { IndexView } from '../../api/vector.js';
import type { CacheStats, MemorystoreView } from '../../api/cache.js';
import type { PoolStats } from '../../api/sandbox.js';
import { firstLine, formatBytes, formatUptime, type DaemonSummary, type Health, type StatusRow } from './model.js';

/** API views to dashboard rows: pure, so the rules for "what a row says" are tested without a daemon. */

const byState = (ready: boolean, state: string, bad: string[]): Health => (ready ? 'ok' : bad.includes(state) ? 'bad' : 'busy');

export function agentRow(a: AgentView): StatusRow {
  const serving = a.serving_revision ?? (a.state === 'ready' ? a.latest_revision : undefined);
  const ref = { kind: a.kind, latest: a.latest_revision ?? '', serving: serving ?? '' };
  if (a.state === 'failed') {
    // Nothing serves: say which revision failed and why, never an address that answers nothing.
    return { name: a.name, state: 'failed', health: 'bad', summary: `${a.kind} ${a.latest_revision ?? 'no revision'} failed`, error: firstLine(a.message ?? `revision ${a.latest_revision ?? ''} failed`), ref };
  }
  const newerFailed = a.state === 'ready' && serving && a.latest_revision && serving !== a.latest_revision;
  const row: StatusRow = { name: a.name, state: a.state, health: byState(a.ready, a.state, ['failed']), summary: `${a.kind} ${serving ?? '-'} ${a.public_url}`, ref };
  // Ready on the older revision: yellow, with why the newer one did not take over.
  if (newerFailed) return { ...row, health: 'busy', error: firstLine(a.message ?? `revision ${a.latest_revision} failed; ${serving} keeps serving`) };
  if (a.message && !a.ready) row.error = firstLine(a.message);
  return row;
}

export function serviceRow(s: ServiceView): StatusRow {
  const failing = s.conditions.find((c) => c.status === 'False' && c.message);
  const row: StatusRow = {
    name: s.name,
    state: s.state,
    health: byState(s.ready, s.state, ['degraded', 'invalid', 'not_ready']),
    summary: `${s.latest_ready_revision ?? s.latest_created_revision} min ${s.scaling.min_scale} max ${s.scaling.max_scale} ${s.url}`,
    ref: { latest_ready: s.latest_ready_revision ?? '', min_scale: String(s.scaling.min_scale) },
  };
  const why = s.message ?? failing?.message;
  if (!s.ready && why) row.error = firstLine(why);
  return row;
}

export function mcpRow(m: McpServer): StatusRow {
  const row: StatusRow = {
    name: m.name,
    state: m.state,
    health: byState(m.ready, m.state, ['failed']),
    summary: `v${m.version ?? '-'} ${m.tool_count} tool${m.tool_count === 1 ? '' : 's'} ${m.expose || 'private'} ${m.url ?? ''}`.trim(),
  };
  if (m.message && !m.ready) row.error = firstLine(m.message);
  return row;
}

export function triggerRow(t: TriggerView): StatusRow {
  const source = t.source.schedule ? `cron ${t.source.schedule.cron}` : t.source.pubsub ? `topic ${t.source.pubsub.topic}` : t.source.objectstore ? `bucket ${t.source.objectstore.bucket}` : t.source.type;
  const next = t.next_fire_time ? ` next ${t.next_fire_time.slice(11, 19)}` : '';
  return { name: t.name, state: t.source.type, health: 'ok', summary: `${source} -> ${t.target.kind} ${t.target.service}${next}` };
}

export function endpointRow(e: Endpoint): StatusRow {
  const row: StatusRow = {
    name: e.name,
    state: e.state,
    health: e.state === 'ready' ? 'ok' : e.state === 'failed' ? 'bad' : e.state === 'unpublished' ? 'idle' : 'busy',
    summary: `${e.target.kind}${e.target.name ? ` ${e.target.name}` : ''} auth ${e.auth.mode} ${e.url}`,
  };
  if (e.message && e.state !== 'ready') row.error = firstLine(e.message);
  return row;
}

export function topicRow(t: TopicView): StatusRow {
  return {
    name: t.name,
    state: t.state,
    health: byState(t.ready, t.state, ['degraded']),
    summary: `topic ${t.stats.subscriptions} subs published ${t.stats.published} backlog ${formatBytes(t.stats.backlog_bytes)}`,
    ref: { type: 'topic', topic: t.name },
    ...(t.message && !t.ready ? { error: firstLine(t.message) } : {}),
  };
}

export function subscriptionRow(s: SubscriptionView): StatusRow {
  return {
    name: `${s.topic}/${s.name}`,
    state: s.state,
    health: byState(s.ready, s.state, ['degraded']),
    summary: `backlog ${s.stats.backlog} unacked ${s.stats.unacknowledged} ${s.deliver.mode} consumers ${s.stats.consumers}${s.stats.oldest_unacked_age_seconds === undefined ? '' : ` oldest ${formatUptime(s.stats.oldest_unacked_age_seconds)}`}`,
    ref: { type: 'subscription', topic: s.topic, sub: s.name },
    ...(s.message && !s.ready ? { error: firstLine(s.message) } : {}),
  };
}

export function indexRow(i: IndexView): StatusRow {
  return {
    name: i.name,
    state: i.state,
    health: byState(i.ready, i.state, ['degraded', 'conflict', 'blocked']),
    summary: `${i.points_count} points ${i.dimensions}d ${i.distance}`,
    ...(i.message && !i.ready ? { error: firstLine(i.message) } : {}),
  };
}

export function cacheRow(c: MemorystoreView, stats?: CacheStats | string): StatusRow {
  const live =
    typeof stats === 'string'
      ? `stats: ${stats}`
      : stats
        ? `mem ${stats.used_memory_human ?? formatBytes(stats.used_memory_bytes)}/${c.maxmemory} hit ${stats.hit_rate === undefined ? '-' : `${Math.round(stats.hit_rate * 100)}%`} keys ${stats.db_keys ?? '-'}`
        : `max ${c.maxmemory}`;
  return {
    name: c.name,
    state: c.state,
    health: byState(c.ready, c.state, ['degraded']),
    summary: `${c.size_class} ${live}`,
    ...(c.message && !c.ready ? { error: firstLine(c.message) } : {}),
  };
}

export function daemonRows(d: DaemonSummary, pool: PoolStats | string | undefined): StatusRow[] {
  const rows: StatusRow[] = [
    { name: 'address', state: 'up', health: 'ok', summary: d.url },
    { name: 'uptime', state: formatUptime(d.uptime_seconds), health: d.uptime_seconds === undefined ? 'idle' : 'ok', summary: d.version ? `version ${d.version}` : '' },
    {
      name: 'isolation',
      state: d.isolation?.split(':')[0] ?? 'unknown',
      health: !d.isolation ? 'idle' : /^(none|unavailable)/.test(d.isolation) ? 'bad' : 'ok',
      summary: d.isolation?.split(':').slice(1).join(':').trim() ?? 'not reported by this daemon',
    },
  ];
  if (typeof pool === 'string') rows.push({ name: 'sandbox pool', state: 'unknown', health: 'bad', summary: '', error: pool });
  else if (pool) rows.push({ name: 'sandbox pool', state: `${pool.warm}/${pool.target} warm`, health: pool.warm >= pool.target ? 'ok' : 'busy', summary: `in flight ${pool.in_flight}, created ${pool.created_total}` });
  else rows.push({ name: 'sandbox pool', state: 'n/a', health: 'idle', summary: 'no sandbox listener on this context (remote)' });
  return rows;
}
