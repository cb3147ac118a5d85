import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { cast, makeUser } from '../helpers/fixtures.js';
import { HELLO_PY, archive, deployForm, waitState } from './helpers.js';

let d: TestDaemon;
let c: Awaited<ReturnType<typeof cast>>;
// Built once: archive() runs python synchronously, and blocking the in-process daemon's event
// loop for seconds lets its keep-alive timeout close a socket the client is about to reuse.
let helloArchive: Buffer | undefined;
const code = () => (helloArchive ??= archive({ 'main.py': HELLO_PY }));
const fn = (name: string) => ({ name, framework: 'function', runtime: 'python' });

beforeAll(async () => {
  d = await startTestDaemon();
  c = await cast(d);
});
afterAll(async () => d?.close());

describe('deploy refusals', () => {
  const q = () => `?project=${c.project.slug}`;
  it('400s for the form', async () => {
    const cases: [Record<string, string>, Buffer | undefined, RegExp][] = [
      [{ name: 'Bad_Name', framework: 'function' }, code(), /invalid name/],
      [{ name: 'ok', framework: 'django' }, code(), /unsupported framework django/],
      [{ name: 'ok', framework: 'function', runtime: 'cobol' }, code(), /unsupported runtime cobol/],
      [{ name: 'ok', framework: 'adk', runtime: 'python' }, code(), /runtime is for functions only/],
      [{ name: 'ok', framework: 'function' }, undefined, /missing code/],
      [{ name: 'ok', framework: 'function', config: '{nope' }, code(), /invalid config/],
      [{ name: 'ok', framework: 'function', config: '{"colour":1}' }, code(), /invalid config: unknown config field: colour/],
      [{ framework: 'function' }, code(), /missing required field: name/],
      [{ name: 'ok', framework: 'function', project_id: c.project.id }, code(), /unknown form field: project_id; accepted fields: name, framework, runtime, code, config/],
    ];
    for (const [fields, archiveBuf, msg] of cases) {
      const r = await deployForm(d, c.member.token, fields, archiveBuf, q());
      expect(r.status, JSON.stringify(fields)).toBe(400);
      expect(r.body.error).toMatch(msg);
      expect(r.body.request_id).toMatch(/^req_/);
    }
    const notMultipart = await d.api('POST', `/v1/agents${q()}`, { token: c.member.token, body: { name: 'x' } });
    expect(notMultipart.status).toBe(400);
    expect(notMultipart.body.error).toMatch(/invalid multipart/);
  });

  it('refuses unsafe archives', async () => {
    const cases: [Parameters<typeof archive>[0], RegExp][] = [
      [[{ name: 'main.py', content: HELLO_PY }, { name: 'link', type: 'symlink', linkname: '/etc/passwd' }], /symlink link is not allowed/],
      [[{ name: 'main.py', content: HELLO_PY }, { name: 'hard', type: 'hardlink', linkname: 'main.py' }], /hard link hard is not allowed/],
      [[{ name: '../evil.py', content: 'x' }], /path traversal/],
      [[{ name: 'a/../../evil.py', content: 'x' }], /path traversal/],
      [[{ name: '/etc/cron.d/evil', content: 'x' }], /absolute path/],
      [[{ name: 'big.bin', size: 1024 * 1024 + 1 }], /1048576 bytes per file/],
      [Array.from({ length: 201 }, (_, i) => ({ name: `f${i}.txt`, content: 'x' })), /more than 200 files/],
      [Array.from({ length: 65 }, (_, i) => ({ name: `m${i}.bin`, size: 1024 * 1024 })), /expands past 67108864 bytes/],
    ];
    for (const [entries, msg] of cases) {
      const r = await deployForm(d, c.member.token, fn('unsafe'), archive(entries), q());
      expect(r.status, String(msg)).toBe(400);
      expect(r.body.error).toMatch(msg);
    }
    const junk = await deployForm(d, c.member.token, fn('unsafe'), Buffer.from('not a tarball at all, not even close'.repeat(30)), q());
    expect(junk.status).toBe(400);
    expect(junk.body.error).toMatch(/invalid code archive/);
    expect((await d.api('GET', `/v1/agents/unsafe${q()}`, { token: c.member.token })).status).toBe(404);
  });

  it('needs a credential and a project', async () => {
    expect((await deployForm(d, undefined, fn('anon'), code(), q())).status).toBe(401);
    const loner = await makeUser(d);
    // The bootstrap default project exists, but the loner holds no role anywhere.
    const r = await deployForm(d, loner.token, fn('nowhere'), code());
    expect(r.status).toBe(409);
    expect(r.body.error).toMatch(/resolved to no project/);
  });

  it('503 when the project secret store is not configured', async () => {
    d.app.ctx.config.secretsStore = 'off';
    try {
      const r = await deployForm(d, c.member.token, fn('nostore'), code(), q());
      expect(r.status).toBe(503);
      expect(r.body.error).toMatch(/the project secret store is not configured/);
    } finally {
      d.app.ctx.config.secretsStore = 'local';
    }
  });

  it('an outsider gets 404 for the project; a platform admin without grants 403', async () => {
    expect((await deployForm(d, c.outsider.token, fn('out'), code(), q())).status).toBe(404);
    expect((await deployForm(d, c.platformAdmin.token, fn('out'), code(), q())).status).toBe(403);
  });

  it('enforces the service quota with numbers', async () => {
    d.db.prepare(`UPDATE acct_project_quotas SET value = 1 WHERE project_id = ? AND resource = 'services'`).run(c.project.id);
    try {
      expect((await deployForm(d, c.admin.token, fn('first'), code(), q())).status).toBe(202);
      const r = await deployForm(d, c.admin.token, fn('second'), code(), q());
      expect(r.status).toBe(409);
      expect(r.body.error).toMatch(/service limit: 1 of 1 services used/);
      // Redeploying the same name is not a new service.
      await waitState(d, c.admin.token, 'first', 'ready', c.project.slug);
      expect((await deployForm(d, c.admin.token, fn('first'), code(), q())).status).toBe(202);
      await waitState(d, c.admin.token, 'first', 'ready', c.project.slug);
    } finally {
      d.db.prepare(`UPDATE acct_project_quotas SET value = 30 WHERE project_id = ? AND resource = 'services'`).run(c.project.id);
    }
  });
});

describe('ownership', () => {
  const q = () => `?project=${c.project.slug}`;
  beforeAll(async () => {
    expect((await deployForm(d, c.member.token, fn('mine'), code(), q())).status).toBe(202);
    await waitState(d, c.member.token, 'mine', 'ready', c.project.slug);
  });

  it('another member gets 404 on every route of an agent they do not own; admins see it', async () => {
    const other = await makeUser(d);
    d.db.prepare(`INSERT INTO acct_project_members (id, project_id, user_id, role, created_at) VALUES (?, ?, ?, 'member', ?)`).run(
      crypto.randomUUID(), c.project.id, other.id, new Date().toISOString());
    const routes: [string, string, unknown?][] = [
      ['GET', '/v1/agents/mine'],
      ['DELETE', '/v1/agents/mine'],
      ['POST', '/v1/agents/mine/redeploy'],
      ['GET', '/v1/agents/mine/revisions'],
      ['GET', '/v1/agents/mine/logs'],
      ['GET', '/v1/agents/mine/logs/history'],
      ['GET', '/v1/agents/mine/secrets'],
      ['PUT', '/v1/agents/mine/secrets', { A: 'b' }],
      ['PATCH', '/v1/agents/mine/secrets', { set: { A: 'b' } }],
      ['GET', '/v1/agents/mine/env'],
      ['GET', '/v1/agents/mine/config'],
      ['PATCH', '/v1/agents/mine/config', { timeout_seconds: 5 }],
      ['PATCH', '/v1/agents/mine/env', { set: { A: 'b' } }],
      ['GET', '/v1/agents/mine/files'],
      ['GET', '/v1/agents/mine/files/main.py'],
      ['PUT', '/v1/agents/mine/files/main.py', { content: 'x' }],
      ['DELETE', '/v1/agents/mine/files/main.py'],
    ];
    for (const [method, path, body] of routes) {
      const r = await d.api(method, path + q(), { token: other.token, body });
      expect(r.status, `${method} ${path}`).toBe(404);
      expect(r.body.error).toBe('unknown agent mine');
      const out = await d.api(method, path + q(), { token: c.outsider.token, body });
      expect(out.status, `outsider ${method} ${path}`).toBe(404);
    }
    expect((await deployForm(d, other.token, fn('mine'), code(), q())).status).toBe(404);
    const list = await d.api('GET', `/v1/agents${q()}`, { token: other.token });
    expect(list.body).toEqual({ agents: [], next_page_token: '' });
    const admin = await d.api('GET', `/v1/agents/mine${q()}`, { token: c.admin.token });
    expect(admin.body.owner).toBe(c.member.email);
    const adminList = await d.api('GET', `/v1/agents${q()}`, { token: c.admin.token });
    expect(adminList.body.agents.map((a: any) => a.name)).toContain('mine');
  });

  it('an agent with no recorded owner is 403 unless project admin', async () => {
    d.db.prepare(`UPDATE agents_agents SET owner = NULL WHERE name = 'mine'`).run();
    try {
      const r = await d.api('GET', `/v1/agents/mine${q()}`, { token: c.member.token });
      expect(r.status).toBe(403);
      expect(r.body.error).toMatch(/no recorded owner/);
      expect((await deployForm(d, c.member.token, fn('mine'), code(), q())).status).toBe(403);
      expect((await d.api('GET', `/v1/agents/mine${q()}`, { token: c.admin.token })).status).toBe(200);
    } finally {
      d.db.prepare(`UPDATE agents_agents SET owner = ? WHERE name = 'mine'`).run(c.member.email);
    }
  });

  it('lists page by page with next_page_token always present', async () => {
    const p1 = await d.api('GET', `/v1/agents${q()}&page_size=1`, { token: c.admin.token });
    expect(p1.body.agents).toHaveLength(1);
    expect(p1.body.next_page_token).not.toBe('');
    const p2 = await d.api('GET', `/v1/agents${q()}&page_size=1&page_token=${p1.body.next_page_token}`, { token: c.admin.token });
    expect(p2.body.agents[0].name).not.toBe(p1.body.agents[0].name);
    const all = await d.api('GET', `/v1/agents${q()}&page_size=200`, { token: c.admin.token });
    expect(all.body.next_page_token).toBe('');
    expect((await d.api('GET', `/v1/agents${q()}&page_size=201`, { token: c.admin.token })).status).toBe(400);
  });

  it('unknown agent is 404 unknown agent', async () => {
    const r = await d.api('GET', `/v1/agents/ghost${q()}`, { token: c.admin.token });
    expect(r.status).toBe(404);
    expect(r.body.error).toBe('unknown agent ghost');
  });

  it('env PATCH refuses every name of the spec table, in set and in remove', async () => {
    // Spec 1 §4.12, copied here rather than imported so the test checks the table, not itself.
    const table = [
      'MODEL_API_KEY', 'SVC_INTERNAL_TOKEN', 'SVC_PROJECT_KEY', 'VECTOR_STORE_API_KEY', 'PLATFORM_VECTORDB_API_KEY', 'CACHE_PASSWORD', 'PLATFORM_MEMORYSTORE_PASSWORD',
      'CACHE_ADDR', 'CACHE_USERNAME', 'PLATFORM_MEMORYSTORE_ADDR', 'PLATFORM_MEMORYSTORE_USERNAME', 'VECTOR_STORE_URL', 'PLATFORM_VECTORDB_URL', 'SANDBOX_URL', 'SVC_API_URL', 'SVC_PUBSUB_URL', 'SVC_VECTORDB_URL', 'MCP_SERVERS',
      'SVC_PROJECT_ID', 'PROJECT_SHORT', 'AGENT_NAME', 'AGENT_IMAGE',
      'PLATFORM_REQUEST_TIMEOUT_SECONDS',
      'MEMORY_MODE', 'MEMORY_INJECT', 'MEMORY_TTL_SECONDS', 'MEMORY_EXCLUDE_SENSITIVE', 'MEMORY_TOPICS', 'MEMORY_INSTRUCTIONS', 'KNOWLEDGE_ENABLED',
      'LD_PRELOAD', 'PYTHONPATH', 'PATH', 'HOME', 'SECRETSTORE_ADDR', 'SECRETSTORE_TOKEN', 'BROKER_URL', 'BROKER_PASSWORD', 'TOOL_SANDBOX', 'ORCHESTRATOR_SERVICE_ANYTHING',
    ];
    for (const body of [{ set: Object.fromEntries(table.map((k) => [k, 'x'])) }, { remove: table }]) {
      const r = await d.api('PATCH', `/v1/agents/mine/env${q()}`, { token: c.member.token, body });
      expect(r.status).toBe(400);
      for (const k of table) expect(r.body.error, k).toContain(k);
    }
    for (const k of ['MODEL_BASE_URL', 'CHAT_MODEL', 'EMBED_MODEL', 'EMBED_BASE_URL']) {
      expect((await d.api('PATCH', `/v1/agents/mine/env${q()}`, { token: c.member.token, body: { remove: [k] } })).status, k).toBe(200);
    }
  });

  it('refuses platform-owned env names, each named', async () => {
    const r = await d.api('PATCH', `/v1/agents/mine/env${q()}`, {
      token: c.member.token,
      body: { set: { SVC_PROJECT_KEY: 'x', PATH: '/tmp', MEMORY_MODE: 'on', OK_VAR: '1' }, remove: ['PLATFORM_REQUEST_TIMEOUT_SECONDS', 'ORCHESTRATOR_SERVICE_HOST'] },
    });
    expect(r.status).toBe(400);
    for (const k of ['SVC_PROJECT_KEY', 'PATH', 'MEMORY_MODE', 'PLATFORM_REQUEST_TIMEOUT_SECONDS', 'ORCHESTRATOR_SERVICE_HOST']) expect(r.body.error).toContain(k);
    expect(r.body.error).not.toContain('OK_VAR');
    expect(r.body.error).toMatch(/timeout_seconds/);
    const ok = await d.api('PATCH', `/v1/agents/mine/env${q()}`, { token: c.member.token, body: { set: { MODEL_BASE_URL: 'http://127.0.0.1:1', CHAT_MODEL: 'm', EMBED_MODEL: 'e', EMBED_BASE_URL: 'http://127.0.0.1:2' } } });
    expect(ok.status).toBe(200);
    const empty = await d.api('PATCH', `/v1/agents/mine/env${q()}`, { token: c.member.token, body: {} });
    expect(empty.status).toBe(400);
    expect(empty.body.error).toMatch(/set and remove are both empty/);
    const badKey = await d.api('PATCH', `/v1/agents/mine/secrets${q()}`, { token: c.member.token, body: { set: { '1BAD': 'x' } } });
    expect(badKey.status).toBe(400);
    expect(badKey.body.error).toMatch(/invalid key 1BAD/);
    // Per-agent secrets do not refuse reserved names server-side.
    expect((await d.api('PATCH', `/v1/agents/mine/secrets${q()}`, { token: c.member.token, body: { set: { PATH: 'x' } } })).status).toBe(200);
    const unknownField = await d.api('PATCH', `/v1/agents/mine/env${q()}`, { token: c.member.token, body: { add: { A: 'b' } } });
    expect(unknownField.status).toBe(400);
    expect(unknownField.body.error).toMatch(/unknown body field: add/);
  });
});

describe('invoke gate', () => {
  const q = () => `?project=${c.project.slug}`;
  it('requires a credential when INVOKE_AUTH_REQUIRED (the default)', async () => {
    const anon = await d.api('POST', `/v1/agents/mine/invoke${q()}`, { body: { message: 'x' } });
    expect(anon.status).toBe(401);
    expect(anon.body.error).toMatch(/INVOKE_AUTH_REQUIRED/);
    expect((await d.api('POST', `/v1/agents/mine/invoke${q()}`, { token: c.outsider.token, body: { message: 'x' } })).status).toBe(404);
    const ok = await d.api('POST', `/v1/agents/mine/invoke${q()}`, { token: c.sa.token, body: { message: 'x', user_id: 'u:1' } });
    expect(ok.status).toBe(200);
    expect(ok.body.user_id).toBe('u:1');
  });

  it('validates the body: 1 MiB cap, object, ids', async () => {
    const big = await d.api('POST', `/v1/agents/mine/invoke${q()}`, { token: c.member.token, body: { message: 'x'.repeat(1024 * 1024) } });
    expect(big.status).toBe(413);
    expect((await d.api('POST', `/v1/agents/mine/invoke${q()}`, { token: c.member.token, raw: '[1,2]', headers: { 'content-type': 'application/json' } })).status).toBe(400);
    expect((await d.api('POST', `/v1/agents/mine/invoke${q()}`, { token: c.member.token, raw: '{bad', headers: { 'content-type': 'application/json' } })).status).toBe(400);
    const badSession = await d.api('POST', `/v1/agents/mine/invoke${q()}`, { token: c.member.token, body: { session_id: 'has space' } });
    expect(badSession.status).toBe(400);
    expect(badSession.body.error).toMatch(/session_id/);
    expect((await d.api('POST', `/v1/agents/ghost/invoke${q()}`, { token: c.member.token, body: {} })).status).toBe(404);
  });
});

describe('build queue', () => {
  it('a concurrent deploy is 409 and a stale claim is reclaimable', async () => {
    const q = `?project=${c.project.slug}`;
    const deployed = await deployForm(d, c.member.token, fn('claimed'), code(), q);
    expect(deployed.status).toBe(202);
    await waitState(d, c.member.token, 'claimed', 'ready', c.project.slug);
    // Simulate a builder that claimed a build and went silent.
    const agentId = (d.db.prepare(`SELECT id FROM agents_agents WHERE name = 'claimed'`).get() as { id: string }).id;
    const claimedAt = new Date(Date.now() - 5 * 60_000).toISOString();
    d.db.prepare(`INSERT INTO agents_builds (id, agent_id, reason, state, queued_at, claimed_at, output) VALUES (?, ?, 'deploy', 'running', ?, ?, '')`).run(
      crypto.randomUUID(), agentId, claimedAt, claimedAt);
    const busy = await deployForm(d, c.member.token, fn('claimed'), code(), q);
    expect(busy.status).toBe(409);
    expect(busy.body.error).toMatch(/a build is already in progress/);
    d.db.prepare(`UPDATE agents_builds SET claimed_at = ? WHERE agent_id = ? AND state = 'running'`).run(new Date(Date.now() - 31 * 60_000).toISOString(), agentId);
    const again = await deployForm(d, c.member.token, fn('claimed'), code(), q);
    expect(again.status).toBe(202);
    await waitState(d, c.member.token, 'claimed', 'ready', c.project.slug);
  });
});

describe('limits and wiring', () => {
  const q = () => `?project=${c.project.slug}`;
  it('refuses an upload over MAX_UPLOAD_BYTES with 413', async () => {
    const w = d.app.ctx.config.workloads;
    const before = w.maxUploadBytes;
    w.maxUploadBytes = 2048;
    try {
      const r = await deployForm(d, c.member.token, fn('toobig'), archive([{ name: 'main.py', content: HELLO_PY }, { name: 'pad.txt', content: randomBytes(6000).toString('base64') }]), q());
      expect(r.status).toBe(413);
      expect(r.body.error).toMatch(/exceeds 2048 bytes \(MAX_UPLOAD_BYTES\)/);
    } finally {
      w.maxUploadBytes = before;
    }
  });

  it('answers project deletion hooks and writes audit rows', async () => {
    const hooks = d.app.ctx.hooks;
    const dependents = hooks.projectDependents.map((h) => h(c.project.id)).filter(Boolean);
    expect(dependents[0]).toMatch(/^\d+ agents?$/);
    expect(hooks.agentNames.flatMap((h) => h([c.project.id]))).toContain('mine');
    const actions = (d.db.prepare(`SELECT action FROM acct_audit WHERE project_id = ?`).all(c.project.id) as { action: string }[]).map((r) => r.action);
    expect(actions).toEqual(expect.arrayContaining(['agent.deploy', 'agent.env.patch', 'agent.secrets.patch']));
  });

  it('timeout_seconds clamps at 900 and bounds the invoke; 32 MiB upstream is a 502', async () => {
    const slow = `import os, time\ndef handle(event):\n    if event.get("message") == "slow":\n        time.sleep(3)\n    if event.get("message") == "huge":\n        return {"x": "a" * (33 * 1024 * 1024)}\n    return {"t": os.environ["PLATFORM_REQUEST_TIMEOUT_SECONDS"]}\n`;
    expect((await deployForm(d, c.member.token, { ...fn('slow'), config: '{"timeout_seconds":1}' }, archive({ 'main.py': slow }), q())).status).toBe(202);
    await waitState(d, c.member.token, 'slow', 'ready', c.project.slug);
    const t = await d.api('POST', `/v1/agents/slow/invoke${q()}`, { token: c.member.token, body: { message: 'slow' } });
    expect(t.status).toBe(504);
    expect(t.body.error).toMatch(/did not answer within 1 s/);
    // response_start_seconds bounds the wait for the first byte separately (spec 1 §8.5).
    expect((await d.api('PATCH', `/v1/agents/slow/config${q()}`, { token: c.member.token, body: { timeout_seconds: 30, response_start_seconds: 1 } })).status).toBe(200);
    const start = await d.api('POST', `/v1/agents/slow/invoke${q()}`, { token: c.member.token, body: { message: 'slow' } });
    expect(start.status).toBe(504);
    expect(start.body.error).toMatch(/did not start answering within 1 s \(response_start_seconds\)/);
    const huge = await d.api('POST', `/v1/agents/slow/invoke${q()}`, { token: c.member.token, body: { message: 'huge' } });
    expect(huge.status).toBe(502);
    expect(huge.body.error).toMatch(/exceeds 33554432 bytes/);
    expect((await deployForm(d, c.member.token, { ...fn('slow'), config: '{"timeout_seconds":5000}' }, archive({ 'main.py': slow }), q())).status).toBe(202);
    await waitState(d, c.member.token, 'slow', 'ready', c.project.slug);
    const clamped = await d.api('POST', `/v1/agents/slow/invoke${q()}`, { token: c.member.token, body: {} });
    expect(clamped.body.t).toBe('900');
  });
});
