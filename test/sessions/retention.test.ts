import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/daemon/clock.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { archive, deployForm, waitState } from '../agents/helpers.js';

/** Memory retention: an entry past retention_days is no longer served, counts as expired, and reindex drops it. */
const clock = new ManualClock();
let d: TestDaemon;
let token: string;
beforeAll(async () => {
  d = await startTestDaemon({ invokeAuthRequired: false }, { clock });
  token = await d.adminToken();
  const r = await deployForm(d, token, { name: 'keeper', framework: 'function', runtime: 'python' }, archive({ 'main.py': 'def handle(event):\n    return {"memories": event.get("memories", [])}\n' }));
  expect(r.status).toBe(202);
  await waitState(d, token, 'keeper', 'ready', '', 60_000);
}, 90_000);
afterAll(async () => d?.close());

describe('memory retention', () => {
  it('expires entries after retention_days; reindex drops them', async () => {
    await d.api('PUT', '/v1/agents/keeper/memory/policy', { token, body: { enabled: true, scope: 'agent', retention_days: 1 } });
    const added = await d.api('POST', '/v1/agents/keeper/memory', { token, body: { fact: 'The launch is on Friday.' } });
    expect(added.body.memory.expires_at).toBe(new Date(clock.now() + 86_400_000).toISOString());
    expect((await d.api('POST', '/v1/agents/keeper/invoke', { body: { message: 'when is the launch?' } })).body.memories).toEqual(['The launch is on Friday.']);
    clock.advance(86_400_000 + 1000);
    // Sign-in tokens last 12 hours on the same clock.
    token = await d.login();
    expect((await d.api('POST', '/v1/agents/keeper/invoke', { body: { message: 'when is the launch?' } })).body.memories).toEqual([]);
    expect((await d.api('GET', '/v1/agents/keeper/memory/status', { token })).body.entries).toMatchObject({ total: 1, served: 0, expired: 1 });
    const re = await d.api('POST', '/v1/agents/keeper/memory:reindex', { token });
    expect(re.body.entries).toMatchObject({ total: 0, expired: 0 });
  });
});
