import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { cast } from '../helpers/fixtures.js';
import { ADD_PY, BOOM_PY, SYNTAX_ERROR_PY, base, bearerFor, rpc, waitVersion } from './area-helpers.js';

/**
 * The version state machine of spec 2 §3 and §9 on the process driver: publish builds a
 * content-addressed version, a failing publish leaves the previous version serving, tool delete,
 * rollback without a build, yank and unyank with their 409s.
 */
let d: TestDaemon;
let c: Awaited<ReturnType<typeof cast>>;
let admin: string;
const P = () => c.project.id;

beforeAll(async () => {
  d = await startTestDaemon();
  c = await cast(d);
  admin = c.admin.token;
});
afterAll(() => d?.close());

describe('MCP server versions', () => {
  it('publish builds version 1 and deploys it: pending, building, ready; the endpoint answers tools/call', async () => {
    const created = await d.api('POST', base(P()), { token: admin, body: { name: 'calc' } });
    expect(created.status).toBe(201);
    expect(created.body.mcp_server).toMatchObject({ name: 'calc', state: 'pending', ready: false, expose: '', visibility: '', tool_names: [], tool_count: 0 });
    const pub = await d.api('PUT', `${base(P(), 'calc')}/tools/add`, { token: admin, body: { handler: ADD_PY } });
    expect(pub.status).toBe(202);
    expect(pub.body).toMatchObject({ server: 'calc', name: 'add', published: true, version: 1 });
    expect(typeof pub.body.build_id).toBe('string');
    expect((await d.api('GET', base(P(), 'calc'), { token: admin })).body.mcp_server.state).toMatch(/building|deploying|ready/);
    const s = await waitVersion(d, admin, P(), 'calc', 1);
    expect(s).toMatchObject({ state: 'ready', ready: true, version: 1, tool_names: ['add'], tool_count: 1 });
    expect(s.url).toBe(`${d.internalUrl}/mcp/${c.project.short}/calc`);
    expect(s.image).toMatch(/@sha256:[0-9a-f]{64}$/);
    const bearer = await bearerFor(d, P(), 'calc');
    const r = await rpc(s.url, bearer, 'tools/call', { name: 'add', arguments: { a: 40 } });
    expect(r.status).toBe(200);
    expect(r.body.result.isError).toBe(false);
    expect(r.body.result.content[0].text).toBe('42');
  });

  it('a publish with a syntax error fails with the check line as message; version 1 keeps serving', async () => {
    const pub = await d.api('PUT', `${base(P(), 'calc')}/tools/broken`, { token: admin, body: { handler: SYNTAX_ERROR_PY } });
    expect(pub.status).toBe(202);
    expect(pub.body.version).toBe(2);
    const s = await waitVersion(d, admin, P(), 'calc', 2, 'failed');
    // Spec 2 §3: the failed build moves the server to failed with the reason; the older version serves on.
    expect(s).toMatchObject({ state: 'failed', ready: false, version: 1 });
    expect(s.message).toMatch(/version 2 failed to build: .*tools\/broken\.py, line \d+: SyntaxError/);
    expect(s.message).toMatch(/version 1 keeps serving/);
    const v2 = (await d.api('GET', `${base(P(), 'calc')}/versions`, { token: admin })).body.versions[0];
    expect(v2).toMatchObject({ version: 2, state: 'failed', current: false, tool_names: ['add', 'broken'] });
    expect(v2.message).toMatch(/SyntaxError/);
    expect(v2.image_digest).toBeUndefined();
    const r = await rpc(s.url, await bearerFor(d, P(), 'calc'), 'tools/call', { name: 'add', arguments: { a: 1, b: 1 } });
    expect(r.body.result.content[0].text).toBe('2');
  });

  it('deleting the broken tool builds version 3 with the same tool set as version 1: same digest, no build step', async () => {
    const runs = buildsRun();
    const del = await d.api('DELETE', `${base(P(), 'calc')}/tools/broken`, { token: admin });
    expect(del.status).toBe(202);
    expect(del.body).toMatchObject({ server: 'calc', name: 'broken', deleted: true, version: 3 });
    const s = await waitVersion(d, admin, P(), 'calc', 3);
    expect(s).toMatchObject({ state: 'ready', version: 3, tool_names: ['add'] });
    expect(s.message).toBeUndefined();
    const vs = (await d.api('GET', `${base(P(), 'calc')}/versions`, { token: admin })).body.versions;
    expect(vs.map((v: any) => v.version)).toEqual([3, 2, 1]);
    expect(vs[0].image_digest).toBe(vs[2].image_digest);
    expect(vs[0].image_digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(buildsRun()).toBe(runs);
    expect((await d.api('DELETE', `${base(P(), 'calc')}/tools/broken`, { token: admin })).status).toBe(404);
  });

  it('a second tool: the SDK client lists derived schemas, calls a tool, sees a tool error', async () => {
    await d.api('PUT', `${base(P(), 'calc')}/tools/boom`, { token: admin, body: { handler: BOOM_PY, description: 'explicit description wins' } });
    const s = await waitVersion(d, admin, P(), 'calc', 4);
    const transport = new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${await bearerFor(d, P(), 'calc')}` } } });
    const client = new Client({ name: 'area-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      const add = tools.find((t) => t.name === 'add')!;
      expect(add.description).toMatch(/^Add two numbers/);
      expect(add.inputSchema).toMatchObject({ type: 'object', properties: { a: { type: 'integer' }, b: { type: 'integer', default: 2 } }, required: ['a'] });
      expect(tools.find((t) => t.name === 'boom')!.description).toBe('explicit description wins');
      const ok = await client.callTool({ name: 'add', arguments: { a: 5, b: 6 } });
      expect((ok.content as any[])[0].text).toBe('11');
      const bad = await client.callTool({ name: 'boom', arguments: { reason: 'test' } });
      expect(bad.isError).toBe(true);
      expect((bad.content as any[])[0].text).toMatch(/boom: test/);
    } finally {
      await client.close();
    }
    const listed = (await d.api('GET', `${base(P(), 'calc')}/tools`, { token: c.member.token })).body;
    expect(listed.server).toBe('calc');
    const addTool = listed.tools.find((t: any) => t.name === 'add');
    expect(addTool).toMatchObject({ name: 'add', handler: ADD_PY, credential_keys: [], credentialKeys: [] });
    expect(addTool.schema.properties.a.type).toBe('integer');
    expect(addTool.description).toMatch(/^Add two numbers/);
  });

  it('rollback re-points at a recorded version without a build, fast; the endpoint serves it', async () => {
    const runs = buildsRun();
    const t0 = performance.now();
    const r = await d.api('POST', `${base(P(), 'calc')}/versions/1:rollback`, { token: admin });
    const ms = performance.now() - t0;
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ server: 'calc', version: 1, rolled_back: true });
    expect(r.body.image).toMatch(/@sha256:/);
    expect(ms).toBeLessThan(300);
    expect(buildsRun()).toBe(runs);
    const s = (await d.api('GET', base(P(), 'calc'), { token: admin })).body.mcp_server;
    expect(s).toMatchObject({ state: 'ready', version: 1, ready: true, tool_names: ['add'] });
    const vs = (await d.api('GET', `${base(P(), 'calc')}/versions`, { token: admin })).body.versions;
    expect(vs.length).toBe(4);
    expect(vs.find((v: any) => v.current).version).toBe(1);
    const listed = await rpc(s.url, await bearerFor(d, P(), 'calc'), 'tools/list');
    expect(listed.body.result.tools.map((t: any) => t.name)).toEqual(['add']);
  });

  it('yank: 409 on the running version; a yanked version cannot be rolled back to; unyank', async () => {
    const running = await d.api('POST', `${base(P(), 'calc')}/versions/1:yank`, { token: admin });
    expect(running.status).toBe(409);
    expect(running.body.error).toMatch(/currently running/);
    const y = await d.api('POST', `${base(P(), 'calc')}/versions/4:yank`, { token: admin });
    expect(y.status).toBe(200);
    expect(y.body).toEqual({ server: 'calc', version: 4, yanked: true });
    const v4 = (await d.api('GET', `${base(P(), 'calc')}/versions`, { token: admin })).body.versions.find((v: any) => v.version === 4);
    expect(v4.yanked).toBe(true);
    expect(typeof v4.yanked_at).toBe('string');
    const rb = await d.api('POST', `${base(P(), 'calc')}/versions/4:rollback`, { token: admin });
    expect(rb.status).toBe(409);
    expect(rb.body.error).toMatch(/yanked/);
    const failed = await d.api('POST', `${base(P(), 'calc')}/versions/2:rollback`, { token: admin });
    expect(failed.status).toBe(409);
    expect(failed.body.error).toMatch(/no recorded image/);
    const u = await d.api('POST', `${base(P(), 'calc')}/versions/4:unyank`, { token: admin });
    expect(u.body).toEqual({ server: 'calc', version: 4, yanked: false });
    const v4b = (await d.api('GET', `${base(P(), 'calc')}/versions`, { token: admin })).body.versions.find((v: any) => v.version === 4);
    expect(v4b.yanked).toBeUndefined();
    expect(v4b.yanked_at).toBeUndefined();
    const back = await d.api('POST', `${base(P(), 'calc')}/versions/4:rollback`, { token: admin });
    expect(back.status).toBe(200);
    for (const bad of ['0', '-1', 'abc', '1.5']) {
      const r = await d.api('POST', `${base(P(), 'calc')}/versions/${bad}:yank`, { token: admin });
      expect(r.status, bad).toBe(400);
      expect(r.body.error).toMatch(/positive integer/);
    }
    expect((await d.api('POST', `${base(P(), 'calc')}/versions/99:rollback`, { token: admin })).status).toBe(404);
    expect((await d.api('POST', `${base(P(), 'calc')}/versions/1:frobnicate`, { token: admin })).status).toBe(404);
  });

  it('a version that passes the check but cannot start fails its deploy; the current version never stopped serving', async () => {
    // The check imports the module without the instance's variables; the served instance has them and exits.
    const CRASHY = `import os\nif os.environ.get("MCP_SERVER_VERSION"):\n    os._exit(3)\n\n@tool\ndef crashy() -> str:\n    return "never"\n`;
    const bearer = await bearerFor(d, P(), 'calc');
    const url = (await d.api('GET', base(P(), 'calc'), { token: admin })).body.mcp_server.url;
    await d.api('PUT', `${base(P(), 'calc')}/tools/crashy`, { token: admin, body: { handler: CRASHY } });
    // While version 5 builds and fails to start, version 4 answers every call.
    let calls = 0;
    for (;;) {
      const r = await rpc(url, bearer, 'tools/call', { name: 'add', arguments: { a: calls, b: 1 } });
      expect(r.status).toBe(200);
      expect(r.body.result.content[0].text).toBe(String(calls + 1));
      calls++;
      const v5 = (await d.api('GET', `${base(P(), 'calc')}/versions`, { token: admin })).body.versions[0];
      if (v5.state === 'failed' || v5.state === 'ready') break;
    }
    const s = await waitVersion(d, admin, P(), 'calc', 5, 'failed');
    expect(s).toMatchObject({ state: 'failed', ready: false, version: 4 });
    expect(s.message).toMatch(/version 5 did not become ready: .*; version 4 keeps serving/s);
    const v5 = (await d.api('GET', `${base(P(), 'calc')}/versions`, { token: admin })).body.versions[0];
    // It was built: it has an image, so it stays a (doomed) rollback target rather than a 409.
    expect(v5).toMatchObject({ version: 5, state: 'failed', current: false, image_digest: expect.stringMatching(/^sha256:/) });
    expect((await rpc(url, bearer, 'tools/list')).body.result.tools.map((t: any) => t.name).sort()).toEqual(['add', 'boom']);
  });

  it('every change wrote its audit row', async () => {
    const rows = (await d.api('GET', `/v1/projects/${P()}/audit?page_size=100`, { token: c.member.token })).body;
    const actions = rows.entries.map((e: any) => e.action);
    for (const a of ['mcpserver.create', 'mcpserver.tool.publish', 'mcpserver.tool.delete', 'mcpserver.version.rollback', 'mcpserver.version.yank', 'mcpserver.version.unyank']) expect(actions, a).toContain(a);
  });
});

/** Builds that ran a build step: their output holds the check command (a reused digest's does not). */
function buildsRun(): number {
  return (d.db.prepare(`SELECT COUNT(*) AS n FROM mcp_versions WHERE output LIKE '%--check%'`).get() as { n: number }).n;
}
