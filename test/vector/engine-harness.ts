import Database from 'better-sqlite3';
import type { Distance, QuantizationKind } from '../../src/api/vector.js';
import { IndexEngine, type PlannerSettings } from '../../src/daemon/services/vector/engine.js';
import { vectorMigrations } from '../../src/daemon/services/vector/migrations.js';
import { VectorStore } from '../../src/daemon/services/vector/store.js';
import { intKey } from '../../src/daemon/services/vector/point-ids.js';
import { storedForm, toBlob } from '../../src/daemon/services/vector/scoring.js';

/** A real engine over an in-memory SQLite store, without the HTTP layer (recall and planner tests). */
export function engineHarness(opts: { dims: number; distance: Distance; quantization: QuantizationKind; planner?: Partial<PlannerSettings> }) {
  const db = new Database(':memory:');
  db.exec('CREATE TABLE acct_projects (id TEXT PRIMARY KEY)');
  db.exec(`INSERT INTO acct_projects VALUES ('p')`);
  for (const m of vectorMigrations) db.exec(m);
  db.prepare(
    `INSERT INTO vec_indexes (id, project_id, name, dimensions, distance, on_disk, payload_on_disk, q_kind, q_always_ram, shards, replicas, state, created_at)
     VALUES ('i', 'p', 'x', ?, ?, 0, 0, ?, 0, 1, 1, 'ready', '')`,
  ).run(opts.dims, opts.distance, opts.quantization);
  const store = new VectorStore(db);
  const settings = { id: 'i', dims: opts.dims, distance: opts.distance, quantization: opts.quantization, payloadOnDisk: false };
  const planner = { exactMaxPoints: 0, exactMaxCandidates: 0, ef: 128, wideEfFromPoints: 250_000, ...opts.planner };
  const engine = new IndexEngine(settings, store, planner);
  return {
    db,
    store,
    engine,
    insert(vectors: number[][], payloads: Array<Record<string, unknown>> = [], firstId = 0, into = engine) {
      const pts = vectors.map((v, i) => ({ key: intKey(firstId + i), vector: storedForm(opts.distance, v), payload: payloads[i] ?? {} }));
      db.transaction(() => store.upsertPoints('i', pts.map((p) => ({ id_key: p.key, vector: toBlob(p.vector), payload: JSON.stringify(p.payload) }))))();
      into.upsert(pts);
    },
    delete(ids: number[], from = engine) {
      const keys = ids.map(intKey);
      store.deletePoints('i', keys);
      from.delete(keys);
    },
    /** A fresh engine rebuilt from the same SQLite rows (as on daemon start). */
    reload() {
      const e = this.beginReload();
      e.fillGraph(Infinity);
      return e;
    },
    /** A fresh engine after the first step of a start-up load: keys and payloads, no graph yet. */
    beginReload() {
      const e = new IndexEngine(settings, store, planner);
      e.beginLoad();
      return e;
    },
  };
}
