import { existsSync, readFileSync } from 'node:fs';
import type { HealthDependency } from '../../../api/health.js';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { humanBytes } from '../../../api/quantity.js';
import { writePrivate } from '../../bootstrap.js';
import type { ProjectRow } from '../accounts/access.js';
import type { Broker } from './broker.js';
import { topicPrefix } from './paths.js';
import { topicCounters } from './topics.js';

/** Quota view (spec 3 §4.3): the budget is spent by claim; limit_bytes counts backlog, not disk. */
export function quotaView(b: Broker, project: ProjectRow) {
  const { allocated, topics } = b.store.claim(project.id);
  const { storage, backlog } = b.store.projectBytes(project.id);
  const limit = b.config.projectBudgetBytes;
  const provisioned = b.store.listTopics(project.id, 0, 1_000).some((t) => t.state === 'ready');
  return {
    limit_bytes: limit,
    allocated_bytes: allocated,
    backlog_bytes: backlog,
    storage_bytes: storage,
    available_bytes: Math.max(0, limit - allocated),
    human: `${humanBytes(allocated)} of ${humanBytes(limit)} claimed by ${topics} topic${topics === 1 ? '' : 's'}; ${humanBytes(backlog)} backlog`,
    topics,
    provisioned,
  };
}

/** Usage view: per-topic counters since the broker loaded each topic, plus totals. */
export function usageView(b: Broker, project: ProjectRow) {
  const rows = b.store.listTopics(project.id, 0, 1_000).map((t) => ({ name: t.name, ...topicCounters(b, t) }));
  const totals = { name: 'total', published: 0, delivered: 0, published_bytes: 0, delivered_bytes: 0, storage_bytes: 0, backlog_bytes: 0, subscriptions: 0 };
  for (const r of rows) {
    for (const k of ['published', 'delivered', 'published_bytes', 'delivered_bytes', 'storage_bytes', 'backlog_bytes', 'subscriptions'] as const) totals[k] += r[k];
  }
  return {
    project: project.slug,
    topics: rows,
    totals,
    caveat: 'counters are cumulative since the broker last loaded each topic and reset when the daemon restarts; storage and backlog are live',
  };
}

/** The broker's own signing key (keys/broker.key, 0600): rotating it revokes every broker token. */
function brokerKey(home: string): Uint8Array {
  const file = join(home, 'keys', 'broker.key');
  if (!existsSync(file)) writePrivate(file, randomBytes(32).toString('base64'));
  return Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
}

/**
 * Direct broker credential (spec 3 §4.3). Locally there is no binary-protocol listener: the
 * embedded broker speaks only the daemon's HTTP API, so service_url names the address a
 * platform broker would have and the note says so. The token is a real non-expiring JWT scoped
 * to the project's broker namespace, signed with the broker key.
 */
export async function credentialsView(b: Broker, project: ProjectRow) {
  const prefix = topicPrefix(project.short);
  const { SignJWT } = await import('jose'); // loaded on first use, off the start-up path
  const token = await new SignJWT({ scope: 'broker', topic_prefix: prefix, project_id: project.id })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(`p-${project.short}`)
    .setAudience('pulsar')
    .setIssuer('platform')
    .setIssuedAt(Math.floor(b.clock.now() / 1000))
    .sign(brokerKey(b.ctx.config.home));
  return {
    service_url: `pulsar://broker.p-${project.short}.platform.internal:6650`,
    token,
    topic_prefix: prefix,
    note:
      'token is scoped to this project\'s broker namespace and never expires; revoking it means rotating the broker signing key for everyone. ' +
      'The local platform embeds its broker in the daemon and has no binary-protocol listener: service_url is platform-internal and unreachable here; ' +
      'use the HTTP API (publish, pull, acknowledge) locally. No external endpoint is published.',
  };
}

type Dep = HealthDependency;

/** Messaging health (spec 3 §4.3): at /v1/pubsub/healthz, and its dependencies in the daemon's /healthz. */
export function healthView(b: Broker): { ok: boolean; body: { status: 'ok' | 'degraded'; dependencies: Record<string, Dep> } } {
  const database: Dep = { status: 'ok', critical: true };
  try {
    b.store.db.prepare('SELECT 1').get();
  } catch (e) {
    Object.assign(database, { status: 'down', error: String((e as Error).message) });
  }
  const broker: Dep = b.started && !b.stopped ? { status: 'ok', critical: true } : { status: 'down', critical: true, error: 'broker not running' };
  const sessionKey: Dep = { status: 'ok', critical: true };
  const orchestration: Dep = { status: 'not configured', critical: false };
  const deps = { orchestration, database, broker, 'session-key': sessionKey };
  const ok = Object.values(deps).every((d) => !d.critical || d.status === 'ok');
  return { ok, body: { status: ok ? 'ok' : 'degraded', dependencies: deps } };
}
