import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workloadConfigFromEnv } from '../../src/daemon/config.js';
import { runtimeAvailable } from '../../src/daemon/runtimes/index.js';
import { archive } from '../agents/helpers.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { cast } from '../helpers/fixtures.js';
import { SERVER_PY } from '../serverless/data-helpers.js';
import { history, triggersPath, until } from './helpers.js';

/**
 * A serverless service as the target: the delivery goes through the data plane's internal
 * address (the internal listener, /services/<short>/<name>) to target.path and succeeds on the
 * service's 200; a service scaled to zero is cold-started by the delivery.
 */
const python = await runtimeAvailable('python');
if (!python.ok) console.warn(`SKIPPED: service targets: ${python.reason}`);

let d: TestDaemon;
let c: Awaited<ReturnType<typeof cast>>;
let p: string;

beforeAll(async () => {
  if (!python.ok) return;
  d = await startTestDaemon({ workloads: { ...workloadConfigFromEnv({}), idleMs: 1_500, portMin: 38500, portMax: 38599 } });
  c = await cast(d);
  p = c.project.id;
  const up = await fetch(`${d.url}/v1/projects/${p}/services/sources`, {
    method: 'POST',
    headers: { authorization: `Bearer ${c.member.token}`, 'content-type': 'application/gzip' },
    body: archive({ 'main.py': SERVER_PY }),
  });
  expect(up.status).toBe(201);
  const image = ((await up.json()) as { image: string }).image;
  const s = await d.api('POST', `/v1/projects/${p}/services`, { token: c.member.token, body: { name: 'web', image } });
  expect(s.status, s.text).toBe(202);
}, 60_000);
afterAll(async () => d?.close());

describe.skipIf(!python.ok)('a serverless service as the target', () => {
  it('the delivery reaches target.path through the internal address and succeeds on a 200', { timeout: 60_000 }, async () => {
    const r = await d.api('POST', triggersPath(p), {
      token: c.member.token,
      body: { name: 'to-web', target: { service: 'web', path: '/hook' }, source: { type: 'schedule', schedule: { cron: '0 0 1 1 *', payload: '{"job":"web"}' } }, retry: { max_attempts: 10, backoff: { initial_seconds: 0.5, maximum_seconds: 1 } } },
    });
    expect(r.status, r.text).toBe(202);
    expect(r.body.target).toEqual({ service: 'web', path: '/hook', kind: 'service' });
    expect((await d.api('POST', `${triggersPath(p)}/to-web:fire`, { token: c.member.token })).status).toBe(202);
    const fs = await until(() => history(d, c.member.token, p, 'to-web'), (f) => f[0]?.status === 'succeeded', 50_000, 100);
    expect(fs[0]).toMatchObject({ status: 'succeeded', http_status: 200 });
    const logs = await d.api('GET', `/v1/projects/${p}/services/web/logs?tail=50`, { token: c.member.token });
    expect(logs.text).toContain('served /hook');
  });

  it('a service scaled to zero is cold-started by the delivery', { timeout: 60_000 }, async () => {
    const metrics = async () => (await d.api('GET', `/v1/projects/${p}/services/web/metrics`, { token: c.member.token })).body;
    // Idle past the daemon's idle time (1.5 s here): the service has no instance left.
    await until(metrics, (m) => m.instances.current === 0, 30_000, 100);
    const r = await d.api('POST', triggersPath(p), {
      token: c.member.token,
      body: { name: 'wake-web', target: { service: 'web', path: '/wake' }, source: { type: 'schedule', schedule: { cron: '0 0 1 1 *', payload: '{"job":"wake"}' } }, retry: { max_attempts: 1 } },
    });
    expect(r.status, r.text).toBe(202);
    expect((await d.api('POST', `${triggersPath(p)}/wake-web:fire`, { token: c.member.token })).status).toBe(202);
    // One attempt only: the cold start happens inside the delivery, not through a retry.
    const fs = await until(() => history(d, c.member.token, p, 'wake-web'), (f) => ['succeeded', 'failed', 'dead_lettered'].includes(f[0]?.status), 50_000, 100);
    expect(fs[0]).toMatchObject({ status: 'succeeded', http_status: 200, attempts: 1 });
    const logs = await d.api('GET', `/v1/projects/${p}/services/web/logs?tail=50`, { token: c.member.token });
    expect(logs.text).toContain('served /wake');
  });
});
