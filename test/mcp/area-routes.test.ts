import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { cast } from '../helpers/fixtures.js';
import { ADD_PY, base, bearerFor, rpc, waitVersion } from './area-helpers.js';

/**
 * Every route of spec 2 §4.2 with its listed errors and roles (member reads, project admin
 * writes, outsiders 404), the member's tools:call, and the protocol endpoint's bearer and
 * listener rules (docs/decisions/mcp.md).
 */
let d: TestDaemon;
let c: Awaited<ReturnType<typeof cast>>;
const P = () => c.project.id;

beforeAll(async () => {
  d = await startTestDaemon();
  c = await cast(d);
  // The tool declares API_TOKEN: it is fetched per call with the server's workload key.
  expect((await d.api('POST', `/v1/projects/${P()}/secrets`, { token: c.admin.token, body: { name: 'API_TOKEN', value: 'value-never-logged' } })).status).toBe(201);
  expect((await d.api('POST', base(P()), { token: c.admin.token, body: { name: 'tools' } })).status).toBe(201);
  await d.api('PUT', `${base(P(), 'tools')}/tools/add`, { token: c.admin.token, body: { handler: ADD_PY, credentialKeys: ['API_TOKEN'] } });
  await waitVersion(d, c.admin.token, P(), 'tools', 1);
});
afterAll(() => d?.close());

describe('create', () => {
  it('201 with the server object; other fields ignored; expose apps', async () => {
    const r = await d.api('POST', base(P()), { token: c.admin.token, body: { name: 'pub-1', expose: 'apps', keep_warm: true, image: 'x' } });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({ mcp_server: { name: 'pub-1', visibility: '', expose: 'apps', state: 'pending', ready: false, tool_names: [], tool_count: 0, created_at: expect.any(String) } });
  });

  it('400 invalid name (naming the field), 400 expose, 409 name exists, 413 over 4 KiB', async () => {
    for (const name of ['Upper', '1abc', 'a-', 'a_b', 'x'.repeat(41), '']) {
      const r = await d.api('POST', base(P()), { token: c.admin.token, body: { name } });
      expect(r.status, name).toBe(400);
      expect(r.body.error, name).toMatch(/name/);
    }
    expect((await d.api('POST', base(P()), { token: c.admin.token, body: { name: 'x'.repeat(40) } })).status).toBe(201);
    const expose = await d.api('POST', base(P()), { token: c.admin.token, body: { name: 'bad-expose', expose: 'internet' } });
    expect(expose.status).toBe(400);
    expect(expose.body.error).toMatch(/expose/);
    const dup = await d.api('POST', base(P()), { token: c.admin.token, body: { name: 'tools' } });
    expect(dup.status).toBe(409);
    expect(dup.body.error).toMatch(/already exists/);
    const big = await d.api('POST', base(P()), { token: c.admin.token, body: { name: 'big', pad: 'x'.repeat(5000) } });
    expect(big.status).toBe(413);
  });
});

describe('reads', () => {
  it('list pages by name; get; 404 unknown', async () => {
    const first = await d.api('GET', `${base(P())}?page_size=2`, { token: c.member.token });
    expect(first.status).toBe(200);
    expect(first.body.mcpservers.length).toBe(2);
    expect(first.body.next_page_token).toBeTruthy();
    const rest = await d.api('GET', `${base(P())}?page_size=100&page_token=${first.body.next_page_token}`, { token: c.member.token });
    const names = [...first.body.mcpservers, ...rest.body.mcpservers].map((s: any) => s.name);
    expect(names).toEqual([...names].sort());
    expect(names).toContain('tools');
    const got = await d.api('GET', base(P(), 'tools'), { token: c.member.token });
    expect(got.body.mcp_server).toMatchObject({ name: 'tools', state: 'ready', ready: true, version: 1, tool_names: ['add'] });
    const none = await d.api('GET', base(P(), 'nope'), { token: c.member.token });
    expect(none.status).toBe(404);
    expect(none.body.error).toBe('MCP server nope not found');
  });

  it('tools and versions return both credential key spellings; no API returns the bearer', async () => {
    const t = (await d.api('GET', `${base(P(), 'tools')}/tools`, { token: c.member.token })).body;
    expect(t.tools[0]).toMatchObject({ name: 'add', credential_keys: ['API_TOKEN'], credentialKeys: ['API_TOKEN'] });
    const v = (await d.api('GET', `${base(P(), 'tools')}/versions`, { token: c.member.token })).body;
    expect(v).toMatchObject({ server: 'tools', versions: [{ version: 1, state: 'ready', current: true, credential_keys: ['API_TOKEN'], tool_names: ['add'], tool_count: 1 }] });
    const bearer = await bearerFor(d, P(), 'tools');
    expect(bearer).toMatch(/^svc_mcp_[0-9a-f]{64}$/);
    for (const path of [base(P()), base(P(), 'tools'), `${base(P(), 'tools')}/tools`, `${base(P(), 'tools')}/versions`, `/v1/projects/${P()}/audit`]) {
      expect((await d.api('GET', path, { token: c.admin.token })).text, path).not.toContain(bearer);
    }
    const row = d.db.prepare(`SELECT bearer_sealed, workload_key_sealed FROM mcp_servers WHERE name = 'tools'`).get() as { bearer_sealed: string; workload_key_sealed: string };
    expect(row.bearer_sealed).not.toContain(bearer.slice(8));
    expect(row.bearer_sealed.startsWith('gcm1:')).toBe(true);
    expect(row.workload_key_sealed.startsWith('gcm1:')).toBe(true);
  });
});

describe('publish and tool delete errors', () => {
  it('400 missing handler, 400 invalid tool name, 404 unknown server, 404 absent tool, credential_keys spelling', async () => {
    const missing = await d.api('PUT', `${base(P(), 'pub-1')}/tools/t1`, { token: c.admin.token, body: { description: 'no handler' } });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatch(/handler is required/);
    const badName = await d.api('PUT', `${base(P(), 'pub-1')}/tools/Bad-Name`, { token: c.admin.token, body: { handler: ADD_PY } });
    expect(badName.status).toBe(400);
    expect(badName.body.error).toMatch(/invalid tool name/);
    expect((await d.api('PUT', `${base(P(), 'ghost')}/tools/t1`, { token: c.admin.token, body: { handler: ADD_PY } })).status).toBe(404);
    const absent = await d.api('DELETE', `${base(P(), 'pub-1')}/tools/never`, { token: c.admin.token });
    expect(absent.status).toBe(404);
    expect(absent.body.error).toMatch(/tool never not found/);
    const snake = await d.api('PUT', `${base(P(), 'pub-1')}/tools/adder`, { token: c.admin.token, body: { handler: ADD_PY, credential_keys: ['K1'] } });
    expect(snake.status).toBe(202);
    const t = (await d.api('GET', `${base(P(), 'pub-1')}/tools`, { token: c.member.token })).body.tools[0];
    expect(t).toMatchObject({ credential_keys: ['K1'], credentialKeys: ['K1'] });
    await waitVersion(d, c.admin.token, P(), 'pub-1', 1);
  });
});

describe('roles', () => {
  const writes = (): [string, string, unknown][] => [
    ['POST', base(P()), { name: 'by-member' }],
    ['DELETE', base(P(), 'tools'), undefined],
    ['PUT', `${base(P(), 'tools')}/tools/add`, { handler: ADD_PY }],
    ['DELETE', `${base(P(), 'tools')}/tools/add`, undefined],
    ['POST', `${base(P(), 'tools')}/versions/1:rollback`, undefined],
    ['POST', `${base(P(), 'tools')}/versions/1:yank`, undefined],
    ['POST', `${base(P(), 'tools')}/versions/1:unyank`, undefined],
  ];
  const reads = (): [string, string, unknown][] => [
    ['GET', base(P()), undefined],
    ['GET', base(P(), 'tools'), undefined],
    ['GET', `${base(P(), 'tools')}/tools`, undefined],
    ['GET', `${base(P(), 'tools')}/versions`, undefined],
    ['POST', `${base(P(), 'tools')}/tools/add:call`, { arguments: { a: 1 } }],
  ];

  it('members and member keys read and call; writes are 403 for them; outsiders get 404 everywhere', async () => {
    for (const [method, path, body] of reads()) {
      expect((await d.api(method, path, { token: c.member.token, body })).status, `${method} ${path}`).toBe(200);
      expect((await d.api(method, path, { token: c.sa.token, body })).status, `sa ${method} ${path}`).toBe(200);
    }
    for (const [method, path, body] of writes()) {
      const r = await d.api(method, path, { token: c.member.token, body });
      expect(r.status, `${method} ${path}`).toBe(403);
      expect(r.body.error).toMatch(/admin/);
    }
    for (const [method, path, body] of [...reads(), ...writes()]) {
      const r = await d.api(method, path, { token: c.outsider.token, body });
      expect(r.status, `${method} ${path}`).toBe(404);
      expect(r.body.error).toBe('project not found');
    }
    // Nothing above changed the server.
    expect((await d.api('GET', base(P(), 'tools'), { token: c.admin.token })).body.mcp_server).toMatchObject({ state: 'ready', version: 1 });
  });
});

describe('tools:call (a member tries a tool)', () => {
  it('returns the tools/call result; 404 for an unknown tool; 409 when nothing runs yet', async () => {
    const r = await d.api('POST', `${base(P(), 'tools')}/tools/add:call`, { token: c.member.token, body: { arguments: { a: 3, b: 4 } } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ server: 'tools', tool: 'add', version: 1, isError: false, content: [{ type: 'text', text: '7' }] });
    expect(typeof r.body.duration_ms).toBe('number');
    const wrongArgs = await d.api('POST', `${base(P(), 'tools')}/tools/add:call`, { token: c.member.token, body: { arguments: { a: 'x' } } });
    expect(wrongArgs.status).toBe(200);
    expect(wrongArgs.body.isError).toBe(true);
    expect((await d.api('POST', `${base(P(), 'tools')}/tools/nope:call`, { token: c.member.token, body: {} })).status).toBe(404);
    await d.api('POST', base(P()), { token: c.admin.token, body: { name: 'empty' } });
    expect((await d.api('POST', `${base(P(), 'empty')}/tools/add:call`, { token: c.member.token, body: {} })).status).toBe(409);
  });
});

describe('protocol endpoint', () => {
  it('raw stateless JSON-RPC tools/call with no initialize; 401 with WWW-Authenticate for a wrong or missing bearer', async () => {
    const url = `${d.internalUrl}/mcp/${c.project.short}/tools`;
    const bearer = await bearerFor(d, P(), 'tools');
    const ok = await rpc(url, bearer, 'tools/call', { name: 'add', arguments: { a: 1, b: 2 } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('mcp-session-id')).toBeNull();
    expect(ok.body).toMatchObject({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: '3' }], isError: false } });
    for (const wrong of [undefined, 'svc_mcp_' + '0'.repeat(64), c.admin.token]) {
      const r = await rpc(url, wrong, 'tools/list');
      expect(r.status).toBe(401);
      expect(r.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(r.body).toMatchObject({ error: expect.stringMatching(/bearer/), request_id: expect.any(String) });
    }
    const version = await rpc(url, bearer, 'tools/list', undefined, { 'mcp-protocol-version': '1999-01-01' });
    expect(version.status).toBe(400);
  });

  it('a private server is absent on the main listener (404) and served on the internal one; an exposed one on both', async () => {
    const bearer = await bearerFor(d, P(), 'tools');
    const main = await rpc(`${d.url}/mcp/${c.project.short}/tools`, bearer, 'tools/list');
    expect(main.status).toBe(404);
    expect(main.body.error).toMatch(/no MCP server answers/);
    const ghost = await rpc(`${d.url}/mcp/${c.project.short}/ghost`, bearer, 'tools/list');
    expect(ghost.body.error).toBe(main.body.error.replace('/tools/', '/ghost/'));
    const pub = (await d.api('GET', base(P(), 'pub-1'), { token: c.member.token })).body.mcp_server;
    expect(pub.url).toBe(`${d.url}/mcp/${c.project.short}/pub-1`);
    const pubBearer = await bearerFor(d, P(), 'pub-1');
    expect((await rpc(pub.url, pubBearer, 'tools/list')).body.result.tools.map((t: any) => t.name)).toEqual(['adder']);
    expect((await rpc(`${d.internalUrl}/mcp/${c.project.short}/pub-1`, pubBearer, 'tools/list')).status).toBe(200);
    // One server's bearer does not open another.
    expect((await rpc(pub.url, bearer, 'tools/list')).status).toBe(401);
    // The internal listener serves MCP endpoints only.
    expect((await fetch(`${d.internalUrl}/v1/projects`)).status).toBe(404);
  });
});

describe('delete', () => {
  it('stops the server, removes it and its versions; the endpoint is gone; audit row written', async () => {
    const url = `${d.internalUrl}/mcp/${c.project.short}/pub-1`;
    const bearer = await bearerFor(d, P(), 'pub-1');
    const { artifact } = d.db.prepare(`SELECT v.artifact FROM mcp_versions v JOIN mcp_servers s ON s.id = v.server_id WHERE s.name = 'pub-1'`).get() as { artifact: string };
    expect(existsSync(artifact)).toBe(true);
    const r = await d.api('DELETE', base(P(), 'pub-1'), { token: c.admin.token });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ name: 'pub-1', deleted: true });
    expect((await d.api('GET', base(P(), 'pub-1'), { token: c.admin.token })).status).toBe(404);
    expect((await d.api('DELETE', base(P(), 'pub-1'), { token: c.admin.token })).status).toBe(404);
    expect((await rpc(url, bearer, 'tools/list')).status).toBe(404);
    // Its version directory went with it (no other version uses it).
    expect(existsSync(artifact)).toBe(false);
    expect(d.db.prepare(`SELECT COUNT(*) AS n FROM mcp_versions v LEFT JOIN mcp_servers s ON s.id = v.server_id WHERE s.id IS NULL`).get()).toEqual({ n: 0 });
    const audit = (await d.api('GET', `/v1/projects/${P()}/audit?page_size=100`, { token: c.member.token })).body.entries;
    expect(audit.find((e: any) => e.action === 'mcpserver.delete' && e.target === 'pub-1')).toBeTruthy();
    expect(audit.find((e: any) => e.action === 'mcpserver.create' && e.target === 'tools')).toBeTruthy();
  });
});

describe('what a deployed server gets', () => {
  const ENV_PY = `import os

@tool
def env() -> dict:
    \"\"\"The platform variables a tool can see.\"\"\"
    names = ["MCP_SERVER_NAME", "MCP_SERVER_VERSION", "MCP_REQUEST_TIMEOUT_SECONDS", "SVC_API_URL", "SVC_PROJECT_ID", "SVC_PROJECT_KEY", "SVC_MCP_AUTH_TOKEN", "PLATFORM_INSTANCE_SECRET"]
    return {k: os.environ.get(k) for k in names}
`;

  it('its name, version and timeout as variables; the bearer, project key and instance secret are kept from tools', async () => {
    await d.api('POST', base(P()), { token: c.admin.token, body: { name: 'env' } });
    await d.api('PUT', `${base(P(), 'env')}/tools/env`, { token: c.admin.token, body: { handler: ENV_PY } });
    await waitVersion(d, c.admin.token, P(), 'env', 1);
    const r = await d.api('POST', `${base(P(), 'env')}/tools/env:call`, { token: c.member.token, body: {} });
    expect(r.status).toBe(200);
    const seen = r.body.structuredContent ?? JSON.parse(r.body.content[0].text);
    const got = seen.result ?? seen;
    expect(got).toMatchObject({ MCP_SERVER_NAME: 'env', MCP_SERVER_VERSION: '1', MCP_REQUEST_TIMEOUT_SECONDS: '60', SVC_API_URL: d.url, SVC_PROJECT_ID: P() });
    expect(got.SVC_MCP_AUTH_TOKEN ?? null).toBeNull();
    expect(got.SVC_PROJECT_KEY ?? null).toBeNull();
    expect(got.PLATFORM_INSTANCE_SECRET ?? null).toBeNull();
  });

  it('deleting the last tool leaves an empty version: pending, no url, nothing serves; a rollback brings version 1 back', async () => {
    const del = await d.api('DELETE', `${base(P(), 'env')}/tools/env`, { token: c.admin.token });
    expect(del.status).toBe(202);
    expect(del.body).toMatchObject({ server: 'env', name: 'env', deleted: true, version: 2 });
    const s = (await d.api('GET', base(P(), 'env'), { token: c.member.token })).body.mcp_server;
    expect(s).toMatchObject({ state: 'pending', ready: false, version: 2, tool_names: [], tool_count: 0 });
    expect(s.url).toBeUndefined();
    const v2 = (await d.api('GET', `${base(P(), 'env')}/versions`, { token: c.member.token })).body.versions[0];
    expect(v2).toMatchObject({ version: 2, state: 'ready', current: true, tool_names: [], tool_count: 0 });
    expect(v2.image_digest).toBeUndefined();
    const url = `${d.internalUrl}/mcp/${c.project.short}/env`;
    expect((await rpc(url, await bearerFor(d, P(), 'env'), 'tools/list')).status).toBe(503);
    expect((await d.api('POST', `${base(P(), 'env')}/tools/env:call`, { token: c.member.token, body: {} })).status).toBe(409);
    expect((await d.api('POST', `${base(P(), 'env')}/versions/2:rollback`, { token: c.admin.token })).status).toBe(409);
    const back = await d.api('POST', `${base(P(), 'env')}/versions/1:rollback`, { token: c.admin.token });
    expect(back.status).toBe(200);
    // The version's tool set is the current set again.
    expect((await d.api('GET', base(P(), 'env'), { token: c.member.token })).body.mcp_server).toMatchObject({ state: 'ready', version: 1, url, tool_names: ['env'] });
    expect((await d.api('GET', `${base(P(), 'env')}/tools`, { token: c.member.token })).body.tools.map((t: any) => t.name)).toEqual(['env']);
    expect((await rpc(url, await bearerFor(d, P(), 'env'), 'tools/list')).body.result.tools.map((t: any) => t.name)).toEqual(['env']);
  });

  it('no file of the state directory holds a bearer or a fetched secret value in clear', async () => {
    const secrets = [await bearerFor(d, P(), 'tools'), await bearerFor(d, P(), 'env'), 'value-never-logged'];
    const files: string[] = [];
    const walk = (dir: string) => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        const p = join(dir, e.name);
        if (e.isDirectory()) walk(p);
        else if (e.isFile()) files.push(p);
      }
    };
    walk(d.home);
    expect(files.some((f) => f.endsWith('platform.db'))).toBe(true);
    for (const f of files) {
      const text = readFileSync(f).toString('latin1');
      for (const s of secrets) expect(text.includes(s), `${f} holds a secret`).toBe(false);
    }
  });
});
