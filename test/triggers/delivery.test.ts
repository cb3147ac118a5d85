import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { DAEMON_MAIN } from '../helpers/daemon-process.js';
import { runtimeAvailable } from '../../src/daemon/runtimes/index.js';
import { history, recorded, triggersPath, until } from './helpers.js';
import { ProcessDaemon } from './process.js';

/**
 * Delivery on the real daemon process: a target that does not answer in time is retried with
 * the exponential backoff until max_attempts, and the history shows every attempt and the error;
 * a function's 400 (its handler raised) is permanent and never retried; a kill -9 between two
 * attempts loses nothing: the restarted daemon resumes the same delivery, cold-starting the target.
 */
const python = await runtimeAvailable('python');
const skip = !python.ok || !existsSync(DAEMON_MAIN);
if (skip) console.warn(`SKIPPED: trigger delivery: ${python.ok ? 'dist not built' : python.reason}`);

const d = new ProcessDaemon(38300);
const FAR = '0 0 1 1 *'; // fires once a year: these tests fire by hand
const create = async (name: string, payload: unknown, retry: unknown) => {
  const r = await d.api('POST', triggersPath(d.projectId), {
    body: { name, target: { service: 'recorder' }, source: { type: 'schedule', schedule: { cron: FAR, payload: JSON.stringify(payload) } }, retry },
  });
  expect(r.status, r.text).toBe(202);
};
const fire = async (name: string) => {
  const r = await d.api('POST', `${triggersPath(d.projectId)}/${name}:fire`);
  expect(r.status, r.text).toBe(202);
  return r.body.id as string;
};

beforeAll(async () => {
  if (skip) return;
  await d.start({ PLATFORM_TRIGGERS_TIMEOUT_MS: '400', PLATFORM_TRIGGERS_HISTORY: '5' });
  await d.deployRecorder();
}, 120_000);
afterAll(async () => d.close());

describe.skipIf(skip)('trigger delivery: retries, permanent failures, history, crash safety', () => {
  it('a timing-out target is retried with exponential backoff, then given up; the history shows attempts and the error', { timeout: 30_000 }, async () => {
    await create('slow', { sleep: 1.5, run: 'slow' }, { max_attempts: 3, backoff: { initial_seconds: 0.3, maximum_seconds: 5, multiplier: 2 } });
    const id = await fire('slow');
    const fs = await until(() => history(d, d.token, d.projectId, 'slow'), (f) => f[0]?.status === 'failed', 20_000);
    expect(fs[0]).toMatchObject({ id, status: 'failed', attempts: 3, manual: true });
    expect(fs[0].error).toMatch(/no response within the 400 ms deadline \(gave up after 3 of 3 attempts\)/);
    // Three attempts of 400 ms with waits of 0.3 s and 0.6 s between them.
    expect(fs[0].duration_ms).toBeGreaterThanOrEqual(3 * 400 + 300 + 600 - 50);
    const seen = await until(() => recorded(d, d.token, 'default'), (e) => e.filter((x) => x.run === 'slow').length >= 3);
    expect(seen.filter((x) => x.run === 'slow').map((x) => x._cloudevent.deliveryattempt)).toEqual(['1', '2', '3']);
    // Every attempt carries the same ce-id: the receiver can tell a retry from a new firing.
    expect(new Set(seen.filter((x) => x.run === 'slow').map((x) => x._cloudevent.id)).size).toBe(1);
  });

  it("a function's 400 (its handler raised) is permanent: one attempt, no retry", { timeout: 20_000 }, async () => {
    await create('raises', { fail: true, run: 'raises' }, { max_attempts: 5, backoff: { initial_seconds: 0.05 } });
    await fire('raises');
    const fs = await until(() => history(d, d.token, d.projectId, 'raises'), (f) => f[0]?.status === 'failed', 15_000);
    expect(fs[0]).toMatchObject({ status: 'failed', attempts: 1, http_status: 400 });
    expect(fs[0].error).toMatch(/^status 400: .*handler raised ValueError: refused on purpose.*\(permanent: not retried\)$/);
    const seen = (await recorded(d, d.token, 'default')).filter((x) => x.run === 'raises');
    expect(seen).toHaveLength(1);
  });

  it('the history is bounded: the newest firings are kept (PLATFORM_TRIGGERS_HISTORY, here 5)', { timeout: 20_000 }, async () => {
    await create('often', { run: 'often' }, { max_attempts: 1 });
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) {
      ids.push(await fire('often'));
      await until(() => history(d, d.token, d.projectId, 'often'), (f) => f.some((x: any) => x.id === ids[ids.length - 1] && x.status === 'succeeded'));
    }
    const fs = await history(d, d.token, d.projectId, 'often');
    expect(fs.map((f: any) => f.id)).toEqual(ids.slice(-5).reverse());
  });

  it('kill -9 between two attempts loses nothing: after restart the same delivery resumes and succeeds', { timeout: 60_000 }, async () => {
    await create('survivor', { sleep: 1, run: 'survivor' }, { max_attempts: 20, backoff: { initial_seconds: 1, maximum_seconds: 1 } });
    const id = await fire('survivor');
    await until(() => history(d, d.token, d.projectId, 'survivor'), (f) => f[0]?.status === 'retrying' && f[0].attempts >= 1, 15_000);
    await d.kill9();
    // Restarted with a deadline the target meets: the pending delivery is the one that succeeds.
    await d.start({ PLATFORM_TRIGGERS_TIMEOUT_MS: '10000', PLATFORM_SCALE_TO_ZERO_SECONDS: '1' });
    const fs = await until(() => history(d, d.token, d.projectId, 'survivor'), (f) => f[0]?.status === 'succeeded', 45_000, 100);
    expect(fs).toHaveLength(1);
    expect(fs[0]).toMatchObject({ id, status: 'succeeded', http_status: 204 });
    expect(fs[0].attempts).toBeGreaterThanOrEqual(2);
  });

  it('a delivery starts a target scaled to zero', { timeout: 30_000 }, async () => {
    const live = async () => (await d.api('GET', '/v1/agents/recorder/logs?project=default')).text;
    await until(live, (t) => /no running instance/.test(t), 20_000, 200);
    const id = await fire('often');
    const fs = await until(() => history(d, d.token, d.projectId, 'often'), (f) => f.some((x: any) => x.id === id && x.status !== 'pending' && x.status !== 'delivering'), 20_000);
    expect(fs.find((x: any) => x.id === id)).toMatchObject({ status: 'succeeded', attempts: 1, http_status: 204 });
  });
});
