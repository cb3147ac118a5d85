import type { Db } from '../../store/db.js';
import type Database from 'better-sqlite3';

export type TopicState = 'pending' | 'ready' | 'degraded' | 'deleting';

export interface TopicRow {
  id: number;
  project_id: string;
  name: string;
  display_name: string;
  max_bytes: number;
  max_age_ms: number;
  discard: 'old' | 'new';
  state: TopicState;
  message: string;
  storage_bytes: number;
  created_at: string;
  /** Joined from the project: used in paths and addresses. */
  short: string;
}

export interface SubRow {
  id: number;
  topic_id: number;
  project_id: string;
  name: string;
  display_name: string;
  type: 'shared' | 'key-shared' | 'exclusive' | 'failover';
  ack_deadline_seconds: number;
  max_deliver: number;
  start_from: 'all' | 'new';
  max_ack_pending: number;
  deliver_mode: 'pull' | 'push';
  push_url: string | null;
  content_mode: 'cloudevents-structured' | 'cloudevents-binary' | null;
  dl_topic: string | null;
  dl_after: number | null;
  state: TopicState;
  message: string;
  created_at: string;
}

/** One message leased to one consumer. */
export interface Delivery {
  row: DeliveryRow;
  message: MessageRow;
  /** 1 for the first delivery. */
  attempt: number;
}

export interface MessageRow {
  seq: number;
  topic_id: number;
  ledger: number;
  entry: number;
  data: Buffer;
  attributes: string | null;
  key: string | null;
  publish_time: number;
  size: number;
}

/** The part of a pending row a delivery carries. */
export type DeliveryRow = Pick<PendingRow, 'seq' | 'key' | 'attempt'>;

export interface PendingRow {
  sub_id: number;
  seq: number;
  key: string | null;
  attempt: number;
  visible_at: number;
  consumer: string | null;
  last_error: string | null;
  first_failure_at: number | null;
}

/** `(?, ?, ?, ?, ?, ?, ?, ?), ...` for the multi-row message INSERT chunk sizes. */
const MESSAGE_VALUES: Record<number, string> = Object.fromEntries(
  [1, 4, 16, 64].map((k) => [k, Array.from({ length: k }, () => '(?, ?, ?, ?, ?, ?, ?, ?)').join(', ')]),
);

// Only what routing needs (key-shared ownership, held keys, the attempt count).
const VISIBLE = 'SELECT seq, key, attempt FROM msg_pending INDEXED BY msg_pending_visible';
const VISIBLE_FRESH = `${VISIBLE} WHERE sub_id = ? AND visible_at = 0 AND seq > ? ORDER BY seq LIMIT ?`;
const VISIBLE_DUE = `${VISIBLE} WHERE sub_id = ? AND visible_at > 0 AND visible_at <= ? AND seq > ? ORDER BY seq LIMIT ?`;
// Only what a delivery needs, read as arrays (raw mode): better-sqlite3 builds a row object
// property by property through the V8 API, which cost more than the query itself. The pending
// side is read from the visibility index alone (it carries seq and attempt).
const JOINED = `SELECT p.seq, p.attempt, m.ledger, m.entry, m.data, m.attributes, m.key, m.publish_time, m.size
  FROM msg_pending p INDEXED BY msg_pending_visible JOIN msg_messages m ON m.seq = p.seq`;
const JOINED_FRESH = `${JOINED} WHERE p.sub_id = ? AND p.visible_at = 0 AND p.seq > ? ORDER BY p.seq LIMIT ?`;
const JOINED_DUE = `${JOINED} WHERE p.sub_id = ? AND p.visible_at > 0 AND p.visible_at <= ? AND p.seq > ? ORDER BY p.seq LIMIT ?`;
type JoinedRaw = [number, number, number, number, Buffer, string | null, string | null, number, number];

/**
 * No subscription of the topic (the `?` parameter) owes the message: one primary-key probe
 * (sub_id, seq) per subscription of the topic (a subscription being purged has no rows left by then).
 */
const NOT_OWED = `NOT EXISTS (SELECT 1 FROM msg_pending p WHERE p.sub_id IN (SELECT s.id FROM msg_subscriptions s WHERE s.topic_id = ?) AND p.seq = msg_messages.seq)`;

const TOPIC_SELECT = 'SELECT t.*, p.short FROM msg_topics t JOIN acct_projects p ON p.id = t.project_id';

/** SQL of the messaging area; no HTTP here. Statements are prepared once and reused. */
export class MsgStore {
  private readonly cache = new Map<string, Database.Statement>();
  /** One transaction function for the area: db.transaction() per call rebuilt a wrapper each time. */
  private readonly immediate: Database.Transaction<(fn: () => unknown) => unknown>;
  constructor(readonly db: Db) {
    this.immediate = db.transaction((fn: () => unknown) => fn());
  }

  /** Runs fn in an immediate transaction (as `tx` of store/db.ts does), nesting as a savepoint. */
  tx<T>(fn: () => T): T {
    return this.immediate.immediate(fn) as T;
  }

  private st(sql: string): Database.Statement {
    let s = this.cache.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.cache.set(sql, s);
    }
    return s;
  }
  /** A statement in raw mode (rows as arrays), cached apart so no statement ever switches mode. */
  private raw(sql: string): Database.Statement {
    return this.st(`${sql} -- raw`).raw(true);
  }

  // ---- ledgers ----
  /** A fresh ledger id: each load of a topic writes to a new ledger, so ids never repeat. */
  nextLedger(): number {
    return (this.st(`UPDATE msg_meta SET v = v + 1 WHERE k = 'next_ledger' RETURNING v - 1 AS v`).get() as { v: number }).v;
  }

  // ---- topics ----
  insertTopic(t: Omit<TopicRow, 'id' | 'storage_bytes' | 'short' | 'message'>): number {
    return Number(
      this.st(
        `INSERT INTO msg_topics (project_id, name, display_name, max_bytes, max_age_ms, discard, state, created_at)
         VALUES (@project_id, @name, @display_name, @max_bytes, @max_age_ms, @discard, @state, @created_at)`,
      ).run(t).lastInsertRowid,
    );
  }
  topic(projectId: string, name: string): TopicRow | undefined {
    return this.st(`${TOPIC_SELECT} WHERE t.project_id = ? AND t.name = ?`).get(projectId, name) as TopicRow | undefined;
  }
  topicById(id: number): TopicRow | undefined {
    return this.st(`${TOPIC_SELECT} WHERE t.id = ?`).get(id) as TopicRow | undefined;
  }
  listTopics(projectId: string, offset: number, limit: number): TopicRow[] {
    return this.st(`${TOPIC_SELECT} WHERE t.project_id = ? ORDER BY t.name LIMIT ? OFFSET ?`).all(projectId, limit, offset) as TopicRow[];
  }
  allTopics(): TopicRow[] {
    return this.st(`${TOPIC_SELECT} ORDER BY t.id`).all() as TopicRow[];
  }
  topicsWithMaxAge(): TopicRow[] {
    return this.st(`${TOPIC_SELECT} WHERE t.max_age_ms > 0 AND t.state != 'deleting'`).all() as TopicRow[];
  }
  /** Budget claim of a project: every topic's max_bytes, and how many topics hold it. */
  claim(projectId: string): { allocated: number; topics: number } {
    const r = this.st('SELECT COALESCE(SUM(max_bytes), 0) AS allocated, COUNT(*) AS topics FROM msg_topics WHERE project_id = ?').get(projectId) as {
      allocated: number;
      topics: number;
    };
    return r;
  }
  updateTopic(id: number, f: { display_name: string; max_bytes: number; max_age_ms: number; discard: string }): void {
    this.st('UPDATE msg_topics SET display_name = ?, max_bytes = ?, max_age_ms = ?, discard = ? WHERE id = ?').run(
      f.display_name,
      f.max_bytes,
      f.max_age_ms,
      f.discard,
      id,
    );
  }
  setTopicState(id: number, state: TopicState, message = ''): void {
    this.st('UPDATE msg_topics SET state = ?, message = ? WHERE id = ?').run(state, message, id);
  }
  addStorage(topicId: number, delta: number): void {
    if (delta) this.st('UPDATE msg_topics SET storage_bytes = storage_bytes + ? WHERE id = ?').run(delta, topicId);
  }
  /** Removes a topic with everything under it. */
  purgeTopic(id: number): void {
    this.st('DELETE FROM msg_pending WHERE sub_id IN (SELECT id FROM msg_subscriptions WHERE topic_id = ?)').run(id);
    this.st('DELETE FROM msg_messages WHERE topic_id = ?').run(id);
    this.st('DELETE FROM msg_subscriptions WHERE topic_id = ?').run(id);
    this.st('DELETE FROM msg_topics WHERE id = ?').run(id);
  }
  projectTopicCount(projectId: string): number {
    return (this.st('SELECT COUNT(*) AS n FROM msg_topics WHERE project_id = ?').get(projectId) as { n: number }).n;
  }

  // ---- subscriptions ----
  insertSub(s: Omit<SubRow, 'id' | 'message'>): number {
    return Number(
      this.st(
        `INSERT INTO msg_subscriptions (topic_id, project_id, name, display_name, type, ack_deadline_seconds, max_deliver, start_from,
           max_ack_pending, deliver_mode, push_url, content_mode, dl_topic, dl_after, state, created_at)
         VALUES (@topic_id, @project_id, @name, @display_name, @type, @ack_deadline_seconds, @max_deliver, @start_from,
           @max_ack_pending, @deliver_mode, @push_url, @content_mode, @dl_topic, @dl_after, @state, @created_at)`,
      ).run(s).lastInsertRowid,
    );
  }
  sub(topicId: number, name: string): SubRow | undefined {
    return this.st('SELECT * FROM msg_subscriptions WHERE topic_id = ? AND name = ?').get(topicId, name) as SubRow | undefined;
  }
  subById(id: number): SubRow | undefined {
    return this.st('SELECT * FROM msg_subscriptions WHERE id = ?').get(id) as SubRow | undefined;
  }
  listSubs(topicId: number, offset: number, limit: number): SubRow[] {
    return this.st('SELECT * FROM msg_subscriptions WHERE topic_id = ? ORDER BY name LIMIT ? OFFSET ?').all(topicId, limit, offset) as SubRow[];
  }
  /** Subscriptions a new message is owed to: every one not being deleted. */
  liveSubIds(topicId: number): number[] {
    return (this.st(`SELECT id FROM msg_subscriptions WHERE topic_id = ? AND state != 'deleting'`).all(topicId) as { id: number }[]).map((r) => r.id);
  }
  allSubs(): SubRow[] {
    return this.st('SELECT * FROM msg_subscriptions ORDER BY id').all() as SubRow[];
  }
  subCount(topicId: number): number {
    return (this.st(`SELECT COUNT(*) AS n FROM msg_subscriptions WHERE topic_id = ? AND state != 'deleting'`).get(topicId) as { n: number }).n;
  }
  updateSub(id: number, f: Pick<SubRow, 'display_name' | 'ack_deadline_seconds' | 'max_deliver' | 'max_ack_pending' | 'deliver_mode' | 'push_url' | 'content_mode' | 'dl_topic' | 'dl_after'>): void {
    this.st(
      `UPDATE msg_subscriptions SET display_name = @display_name, ack_deadline_seconds = @ack_deadline_seconds, max_deliver = @max_deliver,
         max_ack_pending = @max_ack_pending, deliver_mode = @deliver_mode, push_url = @push_url, content_mode = @content_mode,
         dl_topic = @dl_topic, dl_after = @dl_after WHERE id = @id`,
    ).run({ ...f, id });
  }
  setSubState(id: number, state: TopicState, message = ''): void {
    this.st('UPDATE msg_subscriptions SET state = ?, message = ? WHERE id = ?').run(state, message, id);
  }
  /** Removes a subscription and its cursor; returns the sequence numbers it still owed. */
  purgeSub(id: number): number[] {
    const seqs = (this.st('SELECT seq FROM msg_pending WHERE sub_id = ?').all(id) as { seq: number }[]).map((r) => r.seq);
    this.st('DELETE FROM msg_pending WHERE sub_id = ?').run(id);
    this.st('DELETE FROM msg_subscriptions WHERE id = ?').run(id);
    return seqs;
  }

  // ---- messages ----
  insertMessage(m: Omit<MessageRow, 'seq'>): number {
    return Number(
      this.st(
        'INSERT INTO msg_messages (topic_id, ledger, entry, data, attributes, key, publish_time, size) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      ).run(m.topic_id, m.ledger, m.entry, m.data, m.attributes, m.key, m.publish_time, m.size).lastInsertRowid,
    );
  }
  /**
   * Appends messages in order with multi-row INSERTs (one statement per chunk instead of one per
   * message) and returns the first sequence number: the rows get consecutive sequence numbers
   * because the caller holds the write transaction. Chunk sizes are fixed so only a few
   * statements are ever prepared.
   */
  insertMessages(rows: Omit<MessageRow, 'seq'>[]): number {
    let first = -1;
    let last = -1;
    let i = 0;
    while (i < rows.length) {
      const left = rows.length - i;
      const k = left >= 64 ? 64 : left >= 16 ? 16 : left >= 4 ? 4 : 1;
      const params: unknown[] = new Array(k * 8);
      for (let j = 0; j < k; j++) {
        const m = rows[i + j]!;
        const o = j * 8;
        params[o] = m.topic_id;
        params[o + 1] = m.ledger;
        params[o + 2] = m.entry;
        params[o + 3] = m.data;
        params[o + 4] = m.attributes;
        params[o + 5] = m.key;
        params[o + 6] = m.publish_time;
        params[o + 7] = m.size;
      }
      const r = this.st(
        `INSERT INTO msg_messages (topic_id, ledger, entry, data, attributes, key, publish_time, size) VALUES ${MESSAGE_VALUES[k]}`,
      ).run(params);
      last = Number(r.lastInsertRowid);
      if (first < 0) first = last - k + 1;
      i += k;
    }
    // Defensive: the pending rows below are written by range, so the range must be exactly ours.
    if (last - first + 1 !== rows.length) throw new Error(`messaging: non-consecutive sequence numbers ${first}..${last} for ${rows.length} messages`);
    return first;
  }
  /** The subscription owes every message of the range (just appended by insertMessages). */
  insertPendingRange(subId: number, topicId: number, firstSeq: number, lastSeq: number): void {
    this.st(
      'INSERT INTO msg_pending (sub_id, seq, size, key) SELECT ?, seq, size, key FROM msg_messages WHERE seq BETWEEN ? AND ? AND topic_id = ? ORDER BY seq',
    ).run(subId, firstSeq, lastSeq, topicId);
  }
  /** start_from all: the new subscription owes every message the topic still retains. */
  seedPending(subId: number, topicId: number): number {
    return this.st(
      'INSERT INTO msg_pending (sub_id, seq, size, key) SELECT ?, seq, size, key FROM msg_messages WHERE topic_id = ?',
    ).run(subId, topicId).changes;
  }
  oldest(topicId: number, limit: number): { seq: number; size: number }[] {
    return this.st('SELECT seq, size FROM msg_messages WHERE topic_id = ? ORDER BY seq LIMIT ?').all(topicId, limit) as { seq: number; size: number }[];
  }
  expired(topicId: number, before: number, limit: number): { seq: number; size: number }[] {
    return this.st('SELECT seq, size FROM msg_messages WHERE topic_id = ? AND publish_time < ? ORDER BY seq LIMIT ?').all(topicId, before, limit) as {
      seq: number;
      size: number;
    }[];
  }
  /** Drops a message of a topic for every subscription (discard old, max_age). Returns the bytes freed. */
  dropMessage(topicId: number, seq: number): number {
    this.st('DELETE FROM msg_pending WHERE sub_id IN (SELECT id FROM msg_subscriptions WHERE topic_id = ?) AND seq = ?').run(topicId, seq);
    const r = this.st('DELETE FROM msg_messages WHERE seq = ? RETURNING size').get(seq) as { size: number } | undefined;
    return r?.size ?? 0;
  }
  /** Deletes a message once no subscription owes it. Returns the bytes freed (0 when still owed). */
  reclaim(topicId: number, seq: number): number {
    const r = this.st(`DELETE FROM msg_messages WHERE seq = ? AND ${NOT_OWED} RETURNING size`).get(seq, topicId) as { size: number } | undefined;
    return r?.size ?? 0;
  }
  /** One statement whatever the count: the sequence numbers travel as one JSON array. */
  messages(seqs: number[]): MessageRow[] {
    if (!seqs.length) return [];
    return this.st('SELECT * FROM msg_messages WHERE seq IN (SELECT value FROM json_each(?))').all(JSON.stringify(seqs)) as MessageRow[];
  }
  message(seq: number): MessageRow | undefined {
    return this.st('SELECT * FROM msg_messages WHERE seq = ?').get(seq) as MessageRow | undefined;
  }

  // ---- cursors ----
  /** Leased (delivered, not yet acknowledged, deadline not passed) or backing off. */
  inflight(subId: number, now: number): number {
    return (this.st('SELECT COUNT(*) AS n FROM msg_pending WHERE sub_id = ? AND visible_at > ?').get(subId, now) as { n: number }).n;
  }
  /** Deliverable rows after `afterSeq` in publish order (see mergeVisible), for routing that skips rows. */
  visible(subId: number, now: number, afterSeq: number, limit: number): DeliveryRow[] {
    return this.mergeVisible(
      this.st(VISIBLE_FRESH).all(subId, afterSeq, limit) as DeliveryRow[],
      this.st(VISIBLE_DUE).all(subId, now, afterSeq, limit) as DeliveryRow[],
      limit,
    );
  }
  /**
   * visible() joined with the messages, for routing that takes the first rows as they come
   * (everything but key-shared): one query instead of a second fetch by sequence number.
   */
  visibleMessages(subId: number, topicId: number, now: number, limit: number): (DeliveryRow & MessageRow)[] {
    const toRow = (r: JoinedRaw): DeliveryRow & MessageRow => ({
      seq: r[0],
      attempt: r[1],
      topic_id: topicId,
      ledger: r[2],
      entry: r[3],
      data: r[4],
      attributes: r[5],
      key: r[6],
      publish_time: r[7],
      size: r[8],
    });
    return this.mergeVisible(
      (this.raw(JOINED_FRESH).all(subId, 0, limit) as JoinedRaw[]).map(toRow),
      (this.raw(JOINED_DUE).all(subId, now, 0, limit) as JoinedRaw[]).map(toRow),
      limit,
    );
  }
  /**
   * Never-delivered and released rows (visible_at 0) come from the visibility index in seq order
   * without stepping over leased rows (a primary-key scan did, on every pull); rows whose lease
   * or backoff ran out come from the same index, sorted (usually few). Both lists are in seq
   * order, so merging them keeps publish order. visible_at is never negative. INDEXED BY: without
   * ANALYZE statistics SQLite would pick the primary key and scan the whole backlog.
   */
  private mergeVisible<T extends { seq: number }>(fresh: T[], due: T[], limit: number): T[] {
    if (!due.length) return fresh;
    if (!fresh.length) return due;
    const out: T[] = [];
    let i = 0;
    let j = 0;
    while (out.length < limit && (i < fresh.length || j < due.length)) {
      if (j >= due.length || (i < fresh.length && fresh[i]!.seq < due[j]!.seq)) out.push(fresh[i++]!);
      else out.push(due[j++]!);
    }
    return out;
  }
  /** Ordering keys with a delivery leased or backing off: their later messages must wait. */
  heldKeys(subId: number, now: number): Set<string> {
    const rows = this.st('SELECT DISTINCT key FROM msg_pending WHERE sub_id = ? AND visible_at > ? AND key IS NOT NULL').all(subId, now) as { key: string }[];
    return new Set(rows.map((r) => r.key));
  }
  nextVisibleAt(subId: number, now: number): number | undefined {
    const r = this.st('SELECT MIN(visible_at) AS t FROM msg_pending WHERE sub_id = ? AND visible_at > ?').get(subId, now) as { t: number | null };
    return r.t ?? undefined;
  }
  lease(subId: number, seq: number, until: number, consumer: string): void {
    this.st('UPDATE msg_pending SET attempt = attempt + 1, visible_at = ?, consumer = ? WHERE sub_id = ? AND seq = ?').run(until, consumer, subId, seq);
  }
  /** lease() for many rows in one statement. */
  leaseMany(subId: number, seqs: number[], until: number, leaseTag: string): void {
    this.st(
      'UPDATE msg_pending SET attempt = attempt + 1, visible_at = ?, consumer = ? WHERE sub_id = ? AND seq IN (SELECT value FROM json_each(?))',
    ).run(until, leaseTag, subId, JSON.stringify(seqs));
  }
  pending(subId: number, seq: number): PendingRow | undefined {
    return this.st('SELECT * FROM msg_pending WHERE sub_id = ? AND seq = ?').get(subId, seq) as PendingRow | undefined;
  }
  /** A failed push attempt: back off until `until` and keep the error for the dead-letter record. */
  retryLater(subId: number, seq: number, until: number, error: string, now: number): void {
    this.st(
      'UPDATE msg_pending SET visible_at = ?, last_error = ?, first_failure_at = COALESCE(first_failure_at, ?) WHERE sub_id = ? AND seq = ?',
    ).run(until, error, now, subId, seq);
  }
  ack(subId: number, seq: number): boolean {
    return this.st('DELETE FROM msg_pending WHERE sub_id = ? AND seq = ?').run(subId, seq).changes > 0;
  }
  /**
   * Acknowledges many messages in one DELETE (a sequence number listed twice is deleted once),
   * then reclaims, in one more, those no subscription owes any more. Returns how many were still
   * owed and the bytes freed.
   */
  ackMany(subId: number, topicId: number, seqs: number[]): { acked: number; freed: number } {
    const json = JSON.stringify(seqs);
    const acked = this.st('DELETE FROM msg_pending WHERE sub_id = ? AND seq IN (SELECT value FROM json_each(?))').run(subId, json).changes;
    if (!acked) return { acked, freed: 0 };
    const gone = this.st(`DELETE FROM msg_messages WHERE seq IN (SELECT value FROM json_each(?)) AND ${NOT_OWED} RETURNING size`).all(json, topicId) as {
      size: number;
    }[];
    let freed = 0;
    for (const g of gone) freed += g.size;
    return { acked, freed };
  }
  /** Makes a gone consumer's leased messages deliverable again at once (Pulsar redelivers on disconnect). */
  releaseConsumer(subId: number, leaseTag: string, now: number): number {
    return this.st('UPDATE msg_pending SET visible_at = 0 WHERE sub_id = ? AND consumer = ? AND visible_at > ?').run(subId, leaseTag, now).changes;
  }
  /** Broker restart: every consumer connection is gone, so every unacknowledged message is due again. */
  releaseAll(): number {
    return this.st('UPDATE msg_pending SET visible_at = 0 WHERE visible_at > 0').run().changes;
  }

  // ---- stats ----
  /** `oldestPublish` is the publish time (ms) of the oldest message still owed, absent when none is. */
  subStats(subId: number, now: number): { backlog: number; unacked: number; oldestPublish?: number } {
    const s = this.st(
      'SELECT COUNT(*) AS backlog, COALESCE(SUM(attempt > 0 AND visible_at > ?), 0) AS unacked, MIN(seq) AS oldest FROM msg_pending WHERE sub_id = ?',
    ).get(now, subId) as { backlog: number; unacked: number; oldest: number | null };
    if (s.oldest === null) return { backlog: s.backlog, unacked: s.unacked };
    const m = this.st('SELECT publish_time FROM msg_messages WHERE seq = ?').get(s.oldest) as { publish_time: number } | undefined;
    return { backlog: s.backlog, unacked: s.unacked, ...(m ? { oldestPublish: m.publish_time } : {}) };
  }
  topicBacklogBytes(topicId: number): number {
    return (
      this.st('SELECT COALESCE(SUM(size), 0) AS b FROM msg_pending WHERE sub_id IN (SELECT id FROM msg_subscriptions WHERE topic_id = ?)').get(topicId) as {
        b: number;
      }
    ).b;
  }
  projectBytes(projectId: string): { storage: number; backlog: number } {
    const s = this.st('SELECT COALESCE(SUM(storage_bytes), 0) AS s FROM msg_topics WHERE project_id = ?').get(projectId) as { s: number };
    const b = this.st(
      'SELECT COALESCE(SUM(p.size), 0) AS b FROM msg_pending p JOIN msg_subscriptions s ON s.id = p.sub_id WHERE s.project_id = ?',
    ).get(projectId) as { b: number };
    return { storage: s.s, backlog: b.b };
  }
}
