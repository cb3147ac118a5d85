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

export { rng, clustered, ref } from './data.js';
