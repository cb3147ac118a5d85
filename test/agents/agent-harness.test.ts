import { describe, expect, it } from 'vitest';
import type { TestDaemon } from '../helpers/daemon.js';
import { archive, deployForm, langgraphSample, waitState, useAgentDaemon } from './helpers.js';

/**
 * An agent end to end through the daemon. LangGraph cannot be installed here, so the upload
 * carries the shims helper's stand-in package (the framework's documented entry points) beside
 * the agent, the way a vendored dependency would travel.
 */
let d: TestDaemon;
let token: string;
useAgentDaemon((daemon, adminToken) => {
  d = daemon;
  token = adminToken;
});

describe('langgraph agent through the daemon', () => {
  it('deploys, invokes and streams NDJSON', async () => {
    const r = await deployForm(d, token, { name: 'graph', framework: 'langgraph' }, archive(langgraphSample()));
    expect(r.status).toBe(202);
    expect(r.body.agent).toMatchObject({ kind: 'agent', framework: 'langgraph' });
    expect(r.body.agent.runtime).toBeUndefined();
    await waitState(d, token, 'graph', 'ready');
    const inv = await d.api('POST', '/v1/agents/graph/invoke', { body: { message: 'weather', user_id: 'u1', junk: 1 } });
    expect(inv.status).toBe(200);
    expect(inv.body.output).toMatch(/Turn 1: facts about weather/);
    expect(inv.body.user_id).toBe('u1');
    expect(inv.body.session_id).toHaveLength(32);
    expect(inv.body.tool_calls?.[0]?.name).toBe('lookup');

    const t0 = performance.now();
    const res = await fetch(`${d.url}/v1/agents/graph/invoke/stream`, { method: 'POST', body: JSON.stringify({ message: 'rain' }), headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/ndjson/);
    const reader = res.body!.getReader();
    const first = await reader.read();
    console.log(`first NDJSON line through the daemon: ${(performance.now() - t0).toFixed(1)} ms`);
    let text = new TextDecoder().decode(first.value);
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    const lines = text.trim().split('\n').map((l) => JSON.parse(l));
    expect(lines.length).toBeGreaterThan(1);
    expect(lines.at(-1).type).toBe('done');
  });
});
