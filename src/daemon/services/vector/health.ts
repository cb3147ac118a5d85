import { performance } from 'node:perf_hooks';
import type { VectorHealth } from '../../../api/vector.js';
import { HnswlibAnn } from './ann.js';
import type { VectorRuntime } from './runtime.js';

/** Spec 3 §4.1: each probe has a 5 s budget; a slower answer counts as a failure. */
const PROBE_BUDGET_MS = 5000;
/** A pending index older than its readiness delay plus this grace means the scheduler is stuck. */
const STUCK_GRACE_MS = 30_000;

type Dep = VectorHealth['dependencies']['database'];

function probe(fn: () => void): Dep {
  const t = performance.now();
  try {
    fn();
  } catch (e) {
    return { ok: false, latency_ms: round(performance.now() - t), error: (e as Error).message };
  }
  const latency = performance.now() - t;
  if (latency > PROBE_BUDGET_MS) return { ok: false, latency_ms: round(latency), error: `probe took longer than ${PROBE_BUDGET_MS / 1000} s` };
  return { ok: true, latency_ms: round(latency) };
}

const round = (ms: number) => Math.round(ms * 1000) / 1000;

/**
 * Health of the vector API. Locally the "vector store" is the in-process engine (native hnswlib
 * plus the area's tables), "orchestration" is the scheduler that turns pending indexes ready, and
 * "database" is SQLite. Probes are synchronous, so the budget is checked after the fact.
 */
export function vectorHealth(rt: VectorRuntime): { ok: boolean; body: VectorHealth } {
  const database = probe(() => {
    rt.ctx.db.prepare('SELECT 1').get();
  });
  const vector_store = probe(() => {
    if (!rt.running) throw new Error('the vector engine is not running');
    rt.store.countIndexes(''); // the area's tables answer
    // A real insert and search through the native index proves the engine library answers.
    const ann = new HnswlibAnn(2, 'euclid', 16);
    ann.add(0, Float32Array.of(1, 0));
    if (ann.search(Float32Array.of(1, 0), 1, 16)[0]?.id !== 0) throw new Error('the engine self-test search returned a wrong neighbour');
  });
  const orchestration = probe(() => {
    if (!rt.running) throw new Error('the index scheduler is not running');
    const stuck = rt.stuckPending(rt.ctx.config.vector.readyDelayMs + STUCK_GRACE_MS);
    if (stuck.length) throw new Error(`${stuck.length} index${stuck.length > 1 ? 'es' : ''} pending past the readiness delay: ${stuck.slice(0, 5).join(', ')}`);
  });
  const ok = database.ok && vector_store.ok && orchestration.ok;
  return { ok, body: { status: ok ? 'ok' : 'degraded', dependencies: { vector_store, orchestration, database } } };
}
