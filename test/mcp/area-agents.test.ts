import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { archive, deployForm, waitState } from '../agents/helpers.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { cast } from '../helpers/fixtures.js';
import { ADD_PY, base, waitVersion } from './area-helpers.js';

/**
 * MCP_SERVERS (spec 2 §4.2): computed when a revision is built, so a revision made before the
 * server was ready does not see it and the next one does; a workload calls the tool through the
 * entry's url with its bearer, over plain urllib (no SDK in the workload).
 */
const CALLER_PY = `import json, os, urllib.request

def handle(event):
    servers = json.loads(os.environ.get("MCP_SERVERS", "null") or "null")
    if event.get("message") != "call" or not servers:
        return {"servers": servers}
    s = servers[0]
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 20, "b": 22}}}).encode()
    req = urllib.request.Request(s["url"] + "/mcp", data=body, method="POST", headers={
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "authorization": "Bearer " + s["bearer"],
    })
    with urllib.request.urlopen(req, timeout=30) as r:
        answer = json.loads(r.read())
    return {"servers": [x["name"] for x in servers], "text": answer["result"]["content"][0]["text"]}
`;

let d: TestDaemon;
let c: Awaited<ReturnType<typeof cast>>;
beforeAll(async () => {
  d = await startTestDaemon();
  c = await cast(d);
});
afterAll(() => d?.close());

const invoke = async (message: string) => (await d.api('POST', `/v1/agents/caller/invoke?project=${c.project.slug}`, { token: c.admin.token, body: { message } })).body;

/** Polls until the agent is ready on the given revision. */
async function waitServing(q: string, revision: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  let last: any;
  while (Date.now() < deadline) {
    last = (await d.api('GET', `/v1/agents/caller${q}`, { token: c.admin.token })).body;
    if (last.state === 'ready' && last.serving_revision === revision) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`caller did not serve ${revision}: ${JSON.stringify(last)}`);
}

describe('MCP_SERVERS for agents', () => {
  it('a revision built before the server is ready has none; the next revision sees it and calls a tool through it', async () => {
    const q = `?project=${c.project.slug}`;
    expect((await deployForm(d, c.admin.token, { name: 'caller', framework: 'function', runtime: 'python' }, archive({ 'main.py': CALLER_PY }), q)).status).toBe(202);
    await waitState(d, c.admin.token, 'caller', 'ready', c.project.slug);
    expect(await invoke('list')).toMatchObject({ servers: [] });

    await d.api('POST', base(c.project.id), { token: c.admin.token, body: { name: 'math' } });
    await d.api('PUT', `${base(c.project.id, 'math')}/tools/add`, { token: c.admin.token, body: { handler: ADD_PY } });
    const server = await waitVersion(d, c.admin.token, c.project.id, 'math', 1);
    // Still the old revision's list: a server that became ready later waits for the next revision.
    expect(await invoke('list')).toMatchObject({ servers: [] });

    expect((await d.api('POST', `/v1/agents/caller/redeploy${q}`, { token: c.admin.token })).status).toBe(202);
    await waitServing(q, 'caller-00002');
    const listed = await invoke('list');
    expect(listed.servers).toHaveLength(1);
    expect(listed.servers[0]).toMatchObject({ name: 'math', url: server.url });
    // The private server's url is the internal listener's.
    expect(listed.servers[0].url.startsWith(d.internalUrl)).toBe(true);
    expect(listed.servers[0].bearer).toMatch(/^svc_mcp_[0-9a-f]{64}$/);
    expect(await invoke('call')).toMatchObject({ servers: ['math'], text: '42' });
  }, 90_000);
});
