import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { cast } from '../helpers/fixtures.js';
import { ADD_PY, SYNTAX_ERROR_PY, base, bearerFor, rpc, waitVersion } from './area-helpers.js';

/**
 * PUT .../tools (the whole set in one request): one version for several modules, every check of
 * the single PUT naming its tool, roles, prune, the unchanged no-op, and a failing module that
 * fails only its version (docs/decisions/mcp.md, Daemon area).
 */
let d: TestDaemon;
let c: Awaited<ReturnType<typeof cast>>;
const P = () => c.project.id;
const set = () => `${base(P(), 'bulk')}/tools`;

const module = (name: string, op: string) => `@tool
def ${name}(a: int, b: int) -> int:
    """${name} two numbers."""
    return a ${op} b
`;
const MUL_PY = module('mul', '*');
const SUB_PY = module('sub', '-');

beforeAll(async () => {
  d = await startTestDaemon();
  c = await cast(d);
  // add declares K1: its calls fetch it with the server's workload key.
  expect((await d.api('POST', `/v1/projects/${P()}/secrets`, { token: c.admin.token, body: { name: 'K1', value: 'k1-value' } })).status).toBe(201);
  expect((await d.api('POST', base(P()), { token: c.admin.token, body: { name: 'bulk' } })).status).toBe(201);
});
afterAll(() => d?.close());

const versionsOf = async () => (await d.api('GET', `${base(P(), 'bulk')}/versions`, { token: c.member.token })).body.versions as any[];
const call = (tool: string, args: Record<string, unknown>) => d.api('POST', `${set()}/${tool}:call`, { token: c.member.token, body: { arguments: args } });

describe('PUT tools (a whole set, one version)', () => {
  it('three modules make version 1, which serves all three; one audit row per tool', async () => {
    const r = await d.api('PUT', set(), {
      token: c.admin.token,
      body: { tools: { sub: { handler: SUB_PY }, add: { handler: ADD_PY, credential_keys: ['K1'] }, mul: { handler: MUL_PY, description: 'Multiplies.' } } },
    });
    expect(r.status).toBe(202);
    expect(r.body).toMatchObject({ server: 'bulk', names: ['add', 'mul', 'sub'], changed: ['add', 'mul', 'sub'], removed: [], tool_names: ['add', 'mul', 'sub'], published: true, version: 1 });
    expect(r.body.build_id).toEqual(expect.any(String));
    expect(r.body.note).toMatch(/version 1 is building/);
    const server = await waitVersion(d, c.admin.token, P(), 'bulk', 1);
    expect(server).toMatchObject({ state: 'ready', version: 1, tool_names: ['add', 'mul', 'sub'], tool_count: 3 });
    const versions = await versionsOf();
    expect(versions.map((v) => v.version)).toEqual([1]);
    expect(versions[0]).toMatchObject({ tool_names: ['add', 'mul', 'sub'], credential_keys: ['K1'] });
    const listed = await rpc(server.url, await bearerFor(d, P(), 'bulk'), 'tools/list');
    expect(listed.body.result.tools.map((t: any) => t.name).sort()).toEqual(['add', 'mul', 'sub']);
    expect((await call('mul', { a: 6, b: 7 })).body.content[0].text).toBe('42');
    const tools = (await d.api('GET', set(), { token: c.member.token })).body.tools;
    expect(tools.find((t: any) => t.name === 'mul').description).toBe('Multiplies.');
    expect(tools.find((t: any) => t.name === 'add')).toMatchObject({ credential_keys: ['K1'], credentialKeys: ['K1'] });
    const audit = (await d.api('GET', `/v1/projects/${P()}/audit?page_size=100`, { token: c.member.token })).body.entries;
    const rows = audit.filter((e: any) => e.action === 'mcpserver.tool.publish' && e.target.startsWith('bulk/'));
    expect(rows.map((e: any) => e.target).sort()).toEqual(['bulk/add', 'bulk/mul', 'bulk/sub']);
    for (const row of rows) expect(row.details).toMatchObject({ version: 1, build_id: r.body.build_id });
  });

  it('each check of the single PUT answers 400 (413 for size) naming the tool, and writes nothing', async () => {
    const put = (body: unknown) => d.api('PUT', set(), { token: c.admin.token, body });
    const missing = await put({ tools: { add: { handler: ADD_PY }, zeta: { description: 'no source' } } });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toBe('tools.zeta: handler is required: the Python source of the tool module');
    const blank = await put({ tools: { blank: { handler: '  \n' } } });
    expect(blank.body.error).toMatch(/^tools\.blank: handler is required/);
    const badName = await put({ tools: { 'Bad-Name': { handler: ADD_PY }, add: { handler: ADD_PY } } });
    expect(badName.status).toBe(400);
    expect(badName.body.error).toMatch(/^tools\.Bad-Name: invalid tool name "Bad-Name"/);
    const unknown = await put({ tools: { add: { handler: ADD_PY, keep_warm: true } } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatch(/unknown body field: tools\.add\.keep_warm/);
    expect((await put({ tools: {} })).body.error).toMatch(/at least one tool/);
    expect((await put({ tools: { add: { handler: ADD_PY } }, replace: true })).body.error).toMatch(/unknown body field: replace/);
    const big = await put({ tools: { add: { handler: ADD_PY }, huge: { handler: `# ${'x'.repeat(1024 * 1024)}\n${ADD_PY}` } } });
    expect(big.status).toBe(413);
    expect(big.body.error).toMatch(/^tools\.huge: the tool exceeds 1048576 bytes/);
    expect((await d.api('PUT', `${base(P(), 'ghost')}/tools`, { token: c.admin.token, body: { tools: { add: { handler: ADD_PY } } } })).status).toBe(404);
    expect((await versionsOf()).map((v) => v.version)).toEqual([1]);
  });

  it('a member gets 403, an outsider the project 404', async () => {
    const body = { tools: { add: { handler: ADD_PY } } };
    const member = await d.api('PUT', set(), { token: c.member.token, body });
    expect(member.status).toBe(403);
    expect(member.body.error).toMatch(/admin/);
    const outsider = await d.api('PUT', set(), { token: c.outsider.token, body });
    expect(outsider.status).toBe(404);
    expect(outsider.body.error).toBe('project not found');
    expect((await versionsOf()).map((v) => v.version)).toEqual([1]);
  });

  it('the same set again makes no version (200, published false); schema and key order do not count as changes', async () => {
    const r = await d.api('PUT', set(), {
      token: c.admin.token,
      body: { tools: { add: { handler: ADD_PY, credentialKeys: ['K1'] }, mul: { handler: MUL_PY, description: 'Multiplies.' } } },
    });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      server: 'bulk', names: ['add', 'mul'], changed: [], removed: [], tool_names: ['add', 'mul', 'sub'], published: false, version: 1,
      note: 'nothing changed: version 1 serves this tool set, so no version was made',
    });
    expect((await versionsOf()).map((v) => v.version)).toEqual([1]);
  });

  it('without prune the set is merged (one changed module, version 2 holds all); prune removes the rest', async () => {
    const merged = await d.api('PUT', set(), { token: c.admin.token, body: { tools: { add: { handler: ADD_PY.replace('return a + b', 'return a + b + 100'), credential_keys: ['K1'] }, mul: { handler: MUL_PY, description: 'Multiplies.' } } } });
    expect(merged.status).toBe(202);
    expect(merged.body).toMatchObject({ changed: ['add'], removed: [], tool_names: ['add', 'mul', 'sub'], version: 2 });
    await waitVersion(d, c.admin.token, P(), 'bulk', 2);
    expect((await call('add', { a: 1, b: 1 })).body.content[0].text).toBe('102');
    const pruned = await d.api('PUT', set(), { token: c.admin.token, body: { tools: { add: { handler: ADD_PY }, mul: { handler: MUL_PY } }, prune: true } });
    expect(pruned.status).toBe(202);
    expect(pruned.body).toMatchObject({ changed: ['add', 'mul'], removed: ['sub'], tool_names: ['add', 'mul'], version: 3 });
    const server = await waitVersion(d, c.admin.token, P(), 'bulk', 3);
    expect(server.tool_names).toEqual(['add', 'mul']);
    expect((await versionsOf()).map((v) => v.version)).toEqual([3, 2, 1]);
    expect((await call('sub', { a: 1, b: 1 })).status).toBe(404);
    const audit = (await d.api('GET', `/v1/projects/${P()}/audit?page_size=100`, { token: c.member.token })).body.entries;
    expect(audit.find((e: any) => e.action === 'mcpserver.tool.delete' && e.target === 'bulk/sub')?.details).toMatchObject({ version: 3 });
  });

  it('a syntax error in one module fails that one version; the previous keeps serving; sending it again retries', async () => {
    const body = { tools: { add: { handler: ADD_PY }, broken: { handler: SYNTAX_ERROR_PY } } };
    const r = await d.api('PUT', set(), { token: c.admin.token, body });
    expect(r.body).toMatchObject({ changed: ['broken'], version: 4 });
    await waitVersion(d, c.admin.token, P(), 'bulk', 4, 'failed');
    const server = (await d.api('GET', base(P(), 'bulk'), { token: c.member.token })).body.mcp_server;
    expect(server).toMatchObject({ state: 'failed', ready: false, version: 3 });
    expect(server.message).toMatch(/tools\/broken\.py, line \d+: SyntaxError/);
    expect(server.message).toMatch(/version 3 keeps serving/);
    expect((await versionsOf()).find((v) => v.version === 4)).toMatchObject({ state: 'failed', tool_names: ['add', 'broken', 'mul'] });
    expect((await call('mul', { a: 3, b: 3 })).body).toMatchObject({ version: 3, content: [{ text: '9' }] });
    // Nothing changed, but the set failed to build: the same request builds it again.
    const again = await d.api('PUT', set(), { token: c.admin.token, body });
    expect(again.status).toBe(202);
    expect(again.body).toMatchObject({ published: true, changed: ['add', 'broken'], version: 5 });
    await waitVersion(d, c.admin.token, P(), 'bulk', 5, 'failed');
    expect((await call('add', { a: 1 })).body).toMatchObject({ version: 3, content: [{ text: '3' }] });
  });
});
