import { describe, expect, it } from 'vitest';
import type { TestDaemon } from '../helpers/daemon.js';
import { archive, deployForm, langgraphSample, waitState, useAgentDaemon } from '../agents/helpers.js';

/**
 * A streamed invoke cut by the agent's timeout ends with a last NDJSON line saying so (issue 16
 * §3): the sample LangGraph agent, changed so its tool node sleeps past timeout_seconds after the
 * first node's line was streamed.
 */
let d: TestDaemon;
let token: string;
useAgentDaemon((daemon, adminToken) => {
  d = daemon;
  token = adminToken;
});

describe('a cut NDJSON stream', () => {
  it('ends with an error line naming the timeout, after the lines already sent', async () => {
    const files = langgraphSample().map((e) =>
      e.name === 'agent.py'
        ? { ...e, content: (e.content ?? '').replace('def tools(state):\n', 'def tools(state):\n    import time\n    if state["messages"][-2]["content"] == "slow":\n        time.sleep(6)\n') }
        : e,
    );
    expect(files.find((e) => e.name === 'agent.py')?.content).toContain('time.sleep(6)');
    const r = await deployForm(d, token, { name: 'sleepy', framework: 'langgraph', config: '{"timeout_seconds":2}' }, archive(files));
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    await waitState(d, token, 'sleepy', 'ready');

    const t0 = Date.now();
    const res = await fetch(`${d.url}/v1/agents/sleepy/invoke/stream`, { method: 'POST', body: JSON.stringify({ message: 'slow' }), headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(Date.now() - t0).toBeLessThan(5_000);
    const lines = text.trim().split('\n').map((l) => JSON.parse(l));
    expect(lines.length).toBeGreaterThan(1);
    const last = lines.at(-1);
    expect(last.error).toMatch(/^stream cut: agent sleepy did not answer within 2 s/);
    expect(last.request_id).toBe(res.headers.get('x-request-id'));
    expect(lines.slice(0, -1).every((l) => l.error === undefined)).toBe(true);

    // An uncut stream has no error line.
    const ok = await fetch(`${d.url}/v1/agents/sleepy/invoke/stream`, { method: 'POST', body: JSON.stringify({ message: 'rain' }), headers: { 'content-type': 'application/json' } });
    const okLines = (await ok.text()).trim().split('\n').map((l) => JSON.parse(l));
    expect(okLines.at(-1).type).toBe('done');
  });
});
