import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { cast } from '../helpers/fixtures.js';
import { ADD_PY, base, bearerFor, rpc, waitVersion } from './area-helpers.js';

/**
 * Tool code is untrusted: a tool module tries to read the state directory (master key, database),
 * the daemon's environment, the secrets its own runtime holds, another server's version directory,
 * and to call another server's instance on its port. Every attempt must fail.
 */
let d: TestDaemon;
let c: Awaited<ReturnType<typeof cast>>;
const P = () => c.project.id;

const PROBE_PY = (home: string) => `import os, json, glob, urllib.request

def attempt(fn):
    try:
        return "OPEN: " + str(fn())[:80]
    except Exception as exc:
        return "refused: " + type(exc).__name__

@tool
def probe(port: int) -> dict:
    """Tries to leave the sandbox."""
    def other_instance():
        req = urllib.request.Request("http://127.0.0.1:%d/mcp" % port, data=b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
                                     headers={"content-type": "application/json", "accept": "application/json"})
        return urllib.request.urlopen(req, timeout=5).read()
    return {
        "master_key": attempt(lambda: open(${JSON.stringify(home)} + "/keys/secrets-master.key").read()),
        "database": attempt(lambda: open(${JSON.stringify(home)} + "/platform.db", "rb").read(16)),
        "state_listing": attempt(lambda: os.listdir(${JSON.stringify(home)})),
        "versions_seen": [os.path.basename(p) for p in glob.glob(${JSON.stringify(home)} + "/workloads/mcp/*")],
        "daemon_environ": attempt(lambda: open("/proc/%d/environ" % ${process.pid}, "rb").read()),
        "pid1_environ": attempt(lambda: open("/proc/1/environ", "rb").read()),
        "own_environ": attempt(lambda: [k for k in os.environ if k in ("SVC_MCP_AUTH_TOKEN", "SVC_PROJECT_KEY", "PLATFORM_INSTANCE_SECRET")] or 1 / 0),
        "proc_self_environ": attempt(lambda: [e for e in open("/proc/self/environ", "rb").read().split(b"\\0")
                                              if e.split(b"=")[0] in (b"SVC_MCP_AUTH_TOKEN", b"SVC_PROJECT_KEY", b"PLATFORM_INSTANCE_SECRET") and e.split(b"=", 1)[1].strip(b"\\0")] or 1 / 0),
        "other_instance": attempt(other_instance),
    }
`;

beforeAll(async () => {
  d = await startTestDaemon();
  c = await cast(d);
});
afterAll(() => d?.close());

describe('MCP tool isolation', () => {
  it('a tool cannot read the state directory, the daemon, its runtime secrets or another server, nor call its instance', async () => {
    const admin = c.admin.token;
    for (const name of ['victim', 'probe']) expect((await d.api('POST', base(P()), { token: admin, body: { name } })).status).toBe(201);
    expect((await d.api('PUT', `${base(P(), 'victim')}/tools/add`, { token: admin, body: { handler: ADD_PY } })).status).toBe(202);
    expect((await d.api('PUT', `${base(P(), 'probe')}/tools/probe`, { token: admin, body: { handler: PROBE_PY(d.home) } })).status).toBe(202);
    const victim = await waitVersion(d, admin, P(), 'victim', 1);
    const probe = await waitVersion(d, admin, P(), 'probe', 1);
    // Wake the victim so its instance listens, then find its port the way the daemon records it.
    expect((await rpc(victim.url, await bearerFor(d, P(), 'victim'), 'tools/call', { name: 'add', arguments: { a: 1 } })).status).toBe(200);
    const row = d.db.prepare('SELECT i.port FROM mcp_instances i JOIN mcp_servers s ON s.id = i.server_id WHERE s.name = ?').get('victim') as { port: number };
    expect(row.port).toBeGreaterThan(0);
    const r = await rpc(probe.url, await bearerFor(d, P(), 'probe'), 'tools/call', { name: 'probe', arguments: { port: row.port } });
    expect(r.status).toBe(200);
    expect(r.body.result.isError, JSON.stringify(r.body)).toBe(false);
    const seen = r.body.result.structuredContent as Record<string, string>;
    // The sandbox shows the path down to the tool's own version directory, and nothing beside it.
    const own = (d.db.prepare("SELECT v.image_digest FROM mcp_versions v JOIN mcp_servers s ON s.id = v.server_id WHERE s.name = 'probe'").get() as { image_digest: string }).image_digest;
    expect(seen.versions_seen).toEqual([own.replace('sha256:', 'sha256-')]);
    expect(seen.state_listing).toBe("OPEN: ['workloads']");
    for (const [what, outcome] of Object.entries(seen)) {
      if (what === 'versions_seen' || what === 'state_listing') continue;
      if (what === 'other_instance') {
        // The port is reachable on loopback, but the instance answers nothing without its own secret.
        expect(outcome, what).toMatch(/^refused: HTTPError$/);
      } else {
        expect(outcome, what).toMatch(/^refused: /);
      }
    }
  });
});
