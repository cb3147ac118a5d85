import { expect } from 'vitest';
import { configFromEnv, type DaemonConfig } from '../../src/daemon/config.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';

/** Vector settings for tests: instant readiness unless a test wants pending, counts not refreshed. */
export function vectorConfig(v: Partial<DaemonConfig['vector']> = {}): Partial<DaemonConfig> {
  return { vector: { ...configFromEnv({}).vector, readyDelayMs: 0, countRefreshMs: 3_600_000, ...v } };
}

export const startVectorDaemon = (v: Partial<DaemonConfig['vector']> = {}, opts: { home?: string } = {}) =>
  startTestDaemon(vectorConfig(v), opts);

export const idx = (projectId: string, name = '') => `/v1/projects/${projectId}/indexes${name ? '/' + name : ''}`;

/** Creates an index and waits until it is ready (the ready timer is 0 ms in tests). */
export async function readyIndex(d: TestDaemon, token: string, projectId: string, body: Record<string, unknown>) {
  const r = await d.api('POST', idx(projectId), { token, body });
  expect(r.status, r.text).toBe(201);
  await waitFor(async () => (await d.api('GET', idx(projectId, body.name as string), { token })).body.index.ready === true);
  return r.body;
}

export async function waitFor(cond: () => Promise<boolean> | boolean, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Deterministic PRNG (mulberry32) so random data is reproducible. */
export function rng(seed: number) {
  let s = seed;
  return () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Gaussian-clustered vectors, so nearest neighbours are meaningful (as in the benchmark). */
export function clustered(n: number, dims: number, seed = 1, clusters = 20): number[][] {
  const r = rng(seed);
  const gauss = () => Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());
  const centers = Array.from({ length: clusters }, () => Array.from({ length: dims }, gauss));
  return Array.from({ length: n }, () => {
    const c = centers[Math.floor(r() * clusters)]!;
    return c.map((x) => x + 0.5 * gauss());
  });
}

export const ref = {
  dot: (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * b[i]!, 0),
  cosine: (a: number[], b: number[]) => ref.dot(a, b) / (Math.sqrt(ref.dot(a, a)) * Math.sqrt(ref.dot(b, b))),
  euclid: (a: number[], b: number[]) => Math.sqrt(a.reduce((s, x, i) => s + (x - b[i]!) ** 2, 0)),
};
