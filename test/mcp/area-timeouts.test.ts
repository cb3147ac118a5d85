import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workloadConfigFromEnv } from '../../src/daemon/config.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { cast } from '../helpers/fixtures.js';
import { base, bearerFor, rpc, waitVersion } from './area-helpers.js';

/**
 * The endpoint's timeout and failure answers (docs/decisions/mcp.md): with a 1 s request timeout
 * a hanging tool is cut by the runtime as a tool error; an instance that dies mid-request is a
 * 502 in the envelope, and the next request gets a fresh instance.
 */
const SLOW_PY = `import os, time

@tool
def slow(seconds: float) -> str:
    """Sleeps, or kills its own process when seconds is negative."""
    if seconds < 0:
        os._exit(3)
    time.sleep(seconds)
    return "woke"
`;

let d: TestDaemon;
let c: Awaited<ReturnType<typeof cast>>;
let url: string;
let bearer: string;
beforeAll(async () => {
  const w = workloadConfigFromEnv({});
  d = await startTestDaemon({ mcpRequestTimeoutSeconds: 1, workloads: { ...w, buildConcurrency: 1, buildQueueWaitMs: 1000 } });
  c = await cast(d);
  await d.api('POST', base(c.project.id), { token: c.admin.token, body: { name: 'slow' } });
  await d.api('PUT', `${base(c.project.id, 'slow')}/tools/slow`, { token: c.admin.token, body: { handler: SLOW_PY } });
  url = (await waitVersion(d, c.admin.token, c.project.id, 'slow', 1)).url;
  bearer = await bearerFor(d, c.project.id, 'slow');
});
afterAll(() => d?.close());

describe('endpoint timeouts and failures', () => {
  it('a tool past the request timeout is cut with a tool error', async () => {
    const t0 = Date.now();
    const r = await rpc(url, bearer, 'tools/call', { name: 'slow', arguments: { seconds: 30 } });
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(r.status).toBe(200);
    expect(r.body.result.isError).toBe(true);
    expect((await rpc(url, bearer, 'tools/call', { name: 'slow', arguments: { seconds: 0 } })).body.result.content[0].text).toBe('woke');
  });

  it('an instance that dies mid-request is a 502 in the envelope; the next request starts a new one', async () => {
    const r = await rpc(url, bearer, 'tools/call', { name: 'slow', arguments: { seconds: -1 } });
    expect(r.status).toBe(502);
    expect(r.body).toMatchObject({ error: expect.stringMatching(/MCP server slow failed to answer/), request_id: expect.stringMatching(/^req_/) });
    const deadline = Date.now() + 20_000;
    let last: any;
    while (Date.now() < deadline) {
      last = await rpc(url, bearer, 'tools/call', { name: 'slow', arguments: { seconds: 0 } });
      if (last.status === 200) break;
    }
    expect(last.body.result.content[0].text).toBe('woke');
  });

  it('a version that waits past the build queue wait fails with why; one in a builder slot is not cut', async () => {
    // One builder slot: a tool whose import takes 3 s holds it while the next version waits.
    const SLOW_IMPORT = `import time\ntime.sleep(3)\n\n@tool\ndef nap() -> str:\n    return "ok"\n`;
    await d.api('POST', base(c.project.id), { token: c.admin.token, body: { name: 'queue' } });
    await d.api('PUT', `${base(c.project.id, 'queue')}/tools/nap`, { token: c.admin.token, body: { handler: SLOW_IMPORT } });
    await d.api('PUT', `${base(c.project.id, 'slow')}/tools/other`, { token: c.admin.token, body: { handler: SLOW_PY.replace('def slow', 'def other') } });
    const failed = await waitVersion(d, c.admin.token, c.project.id, 'slow', 2, 'failed', 20_000);
    expect(failed.message).toMatch(/version 2 never started building: it waited 1 s for a builder slot; version 1 keeps serving/);
    await waitVersion(d, c.admin.token, c.project.id, 'queue', 1, 'ready', 30_000);
  });
});
