import { afterAll, beforeAll, expect, it } from 'vitest';
import { workloadConfigFromEnv } from '../../src/daemon/config.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { cast } from '../helpers/fixtures.js';
import { base, waitVersion } from './area-helpers.js';

/** A build past the build time limit is cut (its sandboxed check killed) and fails saying so. */
let d: TestDaemon;
let c: Awaited<ReturnType<typeof cast>>;
beforeAll(async () => {
  d = await startTestDaemon({ workloads: { ...workloadConfigFromEnv({}), buildTimeoutMs: 2_000 } });
  c = await cast(d);
});
afterAll(() => d?.close());

it('a tool module that hangs at import fails its build at the time limit, with that cause', async () => {
  const admin = c.admin.token;
  expect((await d.api('POST', base(c.project.id), { token: admin, body: { name: 'slow' } })).status).toBe(201);
  const handler = 'import time\ntime.sleep(60)\n\n@tool\ndef slow() -> str:\n    return "never"\n';
  const started = Date.now();
  expect((await d.api('PUT', `${base(c.project.id, 'slow')}/tools/slow`, { token: admin, body: { handler } })).status).toBe(202);
  const server = await waitVersion(d, admin, c.project.id, 'slow', 1, 'failed', 30_000);
  expect(Date.now() - started).toBeLessThan(20_000);
  expect(server).toMatchObject({ state: 'failed', ready: false });
  expect(server.message).toMatch(/build exceeded the time limit of 2 s/);
});
