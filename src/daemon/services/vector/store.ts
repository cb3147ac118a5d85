import type { Statement } from 'better-sqlite3';
import type { Db } from '../../store/db.js';

/** One row of vec_indexes. */
export interface IndexRow {
  id: string;
  project_id: string;
  name: string;
  dimensions: number;
  distance: 'cosine' | 'dot' | 'euclid';
  on_disk: number;
  payload_on_disk: number;
  q_kind: 'none' | 'scalar' | 'binary';
  q_quantile: string | null;
  q_always_ram: number;
  shards: number;
  replicas: number;
  state: 'pending' | 'ready';
  message: string | null;
  points_count: number;
  vectors_count: number;
  segments_count: number;
  counts_at: string | null;
  created_at: string;
}

/** An upsert's statements, shared with the point writer's own connection (point-writer.ts). */
export const BUMP_WRITE_SEQ_SQL = 'UPDATE vec_indexes SET write_seq = write_seq + 1 WHERE id = ? RETURNING write_seq';
export const UPSERT_POINT_SQL = `INSERT INTO vec_points (index_id, id_key, vector, payload, seq) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (index_id, id_key) DO UPDATE SET vector = excluded.vector, payload = excluded.payload, seq = excluded.seq`;

export interface PointRow {
  id_key: string;
  vector: Buffer;
  payload: string;
}

/** SQL of the vector area; knows nothing about HTTP. */
export class VectorStore {
  private readonly stmts = new Map<string, Statement>();
  constructor(private readonly db: Db) {}

  /** Prepared statements are cached: vector and payload lookups sit on the query path. */
  private q(sql: string): Statement {
    let s = this.stmts.get(sql);
    if (!s) this.stmts.set(sql, (s = this.db.prepare(sql)));
    return s;
  }

  insertIndex(row: IndexRow): void {
    const cols = Object.keys(row);
    this.q(`INSERT INTO vec_indexes (${cols.join(', ')}) VALUES (${cols.map((c) => '@' + c).join(', ')})`).run(row);
  }

  findIndex(projectId: string, name: string): IndexRow | undefined {
    return this.q('SELECT * FROM vec_indexes WHERE project_id = ? AND name = ?').get(projectId, name) as IndexRow | undefined;
  }

  indexById(id: string): IndexRow | undefined {
    return this.q('SELECT * FROM vec_indexes WHERE id = ?').get(id) as IndexRow | undefined;
  }

  listIndexes(projectId: string, offset: number, limit: number): IndexRow[] {
    return this.db
      .prepare('SELECT * FROM vec_indexes WHERE project_id = ? ORDER BY name LIMIT ? OFFSET ?')
      .all(projectId, limit, offset) as IndexRow[];
  }

  indexNames(projectId: string, limit: number): string[] {
    return (this.q('SELECT name FROM vec_indexes WHERE project_id = ? ORDER BY name LIMIT ?').all(projectId, limit) as { name: string }[]).map(
      (r) => r.name,
    );
  }

  countIndexes(projectId: string): number {
    return (this.q('SELECT COUNT(*) AS n FROM vec_indexes WHERE project_id = ?').get(projectId) as { n: number }).n;
  }

  allIndexes(): IndexRow[] {
    return this.q('SELECT * FROM vec_indexes').all() as IndexRow[];
  }

  updateIndex(id: string, fields: Partial<Pick<IndexRow, 'replicas' | 'payload_on_disk' | 'state' | 'message'>>): void {
    const cols = Object.keys(fields);
    if (!cols.length) return;
    this.q(`UPDATE vec_indexes SET ${cols.map((c) => `${c} = @${c}`).join(', ')} WHERE id = @id`).run({ ...fields, id });
  }

  deleteIndex(id: string): void {
    this.q('DELETE FROM vec_points WHERE index_id = ?').run(id);
    this.q('DELETE FROM vec_payload_indexes WHERE index_id = ?').run(id);
    this.q('DELETE FROM vec_indexes WHERE id = ?').run(id);
  }

  countPoints(indexId: string): number {
    return (this.q('SELECT COUNT(*) AS n FROM vec_points WHERE index_id = ?').get(indexId) as { n: number }).n;
  }

  /** Recomputes the lagging counters of spec 3 §2.1 (one vector per point; one segment per shard). */
  refreshCounts(id: string, now: string): void {
    const n = this.countPoints(id);
    this.db
      .prepare(
        `UPDATE vec_indexes SET points_count = ?, vectors_count = ?, segments_count = CASE WHEN state = 'ready' THEN shards ELSE 0 END,
         counts_at = ? WHERE id = ?`,
      )
      .run(n, n, now, id);
  }

  /** Call inside a transaction: the rows and the raised write sequence commit together. */
  upsertPoints(indexId: string, rows: PointRow[]): void {
    const { write_seq: seq } = this.q(BUMP_WRITE_SEQ_SQL).get(indexId) as { write_seq: number };
    const stmt = this.q(UPSERT_POINT_SQL);
    for (const r of rows) stmt.run(indexId, r.id_key, r.vector, r.payload, seq);
  }

  /** Payload-only changes: the vector and the write sequence (which saved graphs track) stay. */
  setPayloads(indexId: string, rows: Array<{ id_key: string; payload: string }>): void {
    const stmt = this.q('UPDATE vec_points SET payload = ? WHERE index_id = ? AND id_key = ?');
    for (const r of rows) stmt.run(r.payload, indexId, r.id_key);
  }

  /** Payload indexes a Qdrant client created: recorded and shown, not needed by the filters. */
  payloadIndexes(indexId: string): Array<{ field_name: string; field_schema: string }> {
    return this.q('SELECT field_name, field_schema FROM vec_payload_indexes WHERE index_id = ? ORDER BY field_name').all(indexId) as Array<{
      field_name: string;
      field_schema: string;
    }>;
  }

  putPayloadIndex(indexId: string, field: string, schema: string, now: string): void {
    this.q(
      `INSERT INTO vec_payload_indexes (index_id, field_name, field_schema, created_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (index_id, field_name) DO UPDATE SET field_schema = excluded.field_schema`,
    ).run(indexId, field, schema, now);
  }

  deletePayloadIndex(indexId: string, field: string): boolean {
    return this.q('DELETE FROM vec_payload_indexes WHERE index_id = ? AND field_name = ?').run(indexId, field).changes > 0;
  }

  deletePoints(indexId: string, keys: string[]): number {
    const stmt = this.q('DELETE FROM vec_points WHERE index_id = ? AND id_key = ?');
    let n = 0;
    for (const k of keys) n += stmt.run(indexId, k).changes;
    return n;
  }

  /** Every point of an index in id order (start-up rebuild and exact scans). */
  iteratePoints(indexId: string): IterableIterator<PointRow> {
    return this.q('SELECT id_key, vector, payload FROM vec_points WHERE index_id = ? ORDER BY id_key').iterate(indexId) as IterableIterator<PointRow>;
  }

  iterateKeysAndPayloads(indexId: string, fromKey = ''): IterableIterator<{ id_key: string; payload: string; seq: number }> {
    return this.db
      .prepare('SELECT id_key, payload, seq FROM vec_points WHERE index_id = ? AND id_key >= ? ORDER BY id_key')
      .iterate(indexId, fromKey) as IterableIterator<{ id_key: string; payload: string; seq: number }>;
  }

  /** The index's write sequence: every upsert statement raises it and stamps its rows with it. */
  writeSeq(indexId: string): number {
    return (this.q('SELECT write_seq FROM vec_indexes WHERE id = ?').get(indexId) as { write_seq: number } | undefined)?.write_seq ?? 0;
  }

  vectorOf(indexId: string, key: string): Buffer | undefined {
    return (this.q('SELECT vector FROM vec_points WHERE index_id = ? AND id_key = ?').get(indexId, key) as { vector: Buffer } | undefined)?.vector;
  }

  /** Vectors of many points in one statement (rescoring reads tens of candidates per query). */
  vectorsOf(indexId: string, keys: string[]): Map<string, Buffer> {
    // json_each drives the loop (CROSS JOIN keeps that order): one primary-key probe per key.
    const rows = this.q(
      'SELECT p.id_key, p.vector FROM json_each(?) AS j CROSS JOIN vec_points AS p ON p.index_id = ? AND p.id_key = j.value',
    ).all(JSON.stringify(keys), indexId) as Array<{ id_key: string; vector: Buffer }>;
    return new Map(rows.map((r) => [r.id_key, r.vector]));
  }

  payloadOf(indexId: string, key: string): string | undefined {
    return (this.q('SELECT payload FROM vec_points WHERE index_id = ? AND id_key = ?').get(indexId, key) as { payload: string } | undefined)
      ?.payload;
  }
}
