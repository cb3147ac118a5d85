import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { archive } from './helpers.js';
import { loginToken, PROCESS_ADMIN, spawnDaemonProcess, type DaemonProcess, apiCall } from '../helpers/daemon-process.js';

/**
 * The invoke path remembers its look-ups (the caller's project, the agent by name and by id, the
 * memory policy; docs/decisions/speed-daemon.md, "Third pass"). Each case first makes an invoke
 * succeed twice (the second is answered from what was remembered), then changes what was looked
 * up and expects the very next invoke to see the change, never a stale answer. INVOKE_AUTH_REQUIRED
 * is on (the default), so the project resolution is a gate.
 */
const ECHO_PY = `import os

def handle(event):
    history = event.get("history", [])
    return {"output": "turn %d: %s" % (len(history) + 1, event.get("message")), "seen": [h["message"] for h in history], "greeting": os.environ.get("GREETING", "")}
`;

let home: string;
let d: DaemonProcess;
let admin: string;
let projectId: string;

const call = (method: string, path: string, token: string, body?: unknown) => apiCall(d.url, method, path, token, body);
const invoke = (token: string, name: string, body: Record<string, unknown> = { message: 'hi' }) => call('POST', `/v1/agents/${name}/invoke`, token, body);

async function deploy(name: string): Promise<void> {
  const form = new FormData();
  form.append('name', name);
  form.append('framework', 'function');
  form.append('runtime', 'python');
  form.append('code', new Blob([new Uint8Array(archive({ 'main.py': ECHO_PY }))]), 'code.tar.gz');
  const r = await fetch(`${d.url}/v1/agents`, { method: 'POST', body: form, headers: { authorization: `Bearer ${admin}` } });
  expect(r.status, await r.text()).toBe(202);
  for (const end = Date.now() + 60_000; ; ) {
    const a = await call('GET', `/v1/agents/${name}`, admin);
    if (a.body.state === 'ready') return;
    expect(a.body.state, JSON.stringify(a.body)).not.toBe('failed');
    expect(Date.now(), `${name} did not become ready`).toBeLessThan(end);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A fresh account signed in, its password already its own (no first-login gate). */
async function person(email: string): Promise<{ userId: string; token: string }> {
  const password = 'Lookup-Test-Password-1';
  const created = await call('POST', '/v1/users', admin, { email, role: 'user', password });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  let token = await loginToken(d.url, { email, password });
  const changed = await call('POST', '/v1/auth/change-password', token, { current_password: password, new_password: `${password}x` });
  if (changed.status === 200) token = changed.body.token;
  return { userId: created.body.user.id as string, token };
}

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'platform-invoke-lookups-'));
  d = await spawnDaemonProcess(home, { PLATFORM_SCALE_TO_ZERO_SECONDS: '600', PLATFORM_SIGNIN_LIMIT_PER_IP: '1000', PLATFORM_SIGNIN_LIMIT_PER_ACCOUNT: '1000' });
  admin = await loginToken(d.url, PROCESS_ADMIN);
  projectId = (await call('GET', '/v1/projects', admin)).body.projects.find((p: { slug: string }) => p.slug === 'default').id;
  await deploy('echo');
}, 90_000);
afterAll(async () => {
  if (d && d.child.exitCode === null && d.child.signalCode === null) d.child.kill('SIGTERM');
  await d?.exited;
  rmSync(home, { recursive: true, force: true });
});

describe('remembered invoke look-ups see every change at once', () => {
  it('a member removed from the project is refused on the next invoke, and served again once re-added', async () => {
    const p = await person('lookup-member@example.test');
    expect(p.userId).toBeTruthy();
    expect((await invoke(p.token, 'echo')).status).not.toBe(200);
    expect((await call('POST', `/v1/projects/${projectId}/members`, admin, { email: 'lookup-member@example.test', role: 'member' })).status).toBe(201);
    // A grant added (an INSERT) is seen by the very next invoke: the refusal above was not remembered.
    expect((await invoke(p.token, 'echo')).status).toBe(200);
    expect((await invoke(p.token, 'echo')).status).toBe(200);
    expect((await call('DELETE', `/v1/projects/${projectId}/members/${p.userId}`, admin)).status).toBe(200);
    const refused = await invoke(p.token, 'echo');
    expect(refused.status, JSON.stringify(refused.body)).not.toBe(200);
    expect(refused.body.error).toBeTruthy();
    expect((await call('POST', `/v1/projects/${projectId}/members`, admin, { email: 'lookup-member@example.test', role: 'member' })).status).toBe(201);
    expect((await invoke(p.token, 'echo')).status).toBe(200);
    expect((await invoke(p.token, 'echo')).status).toBe(200);
    // A write by another process (no trigger of the daemon's connection sees it): data_version does.
    const db = new Database(join(home, 'platform.db'));
    try {
      db.pragma('busy_timeout = 5000');
      expect(db.prepare('DELETE FROM acct_project_members WHERE project_id = ? AND user_id = ?').run(projectId, p.userId).changes).toBe(1);
    } finally {
      db.close();
    }
    expect((await invoke(p.token, 'echo')).status).not.toBe(200);
  }, 60_000);

  it('a new revision (env change) serves the next invoke; a deleted agent is unknown on the next invoke', async () => {
    await deploy('gone');
    expect((await invoke(admin, 'gone')).body.greeting).toBe('');
    expect((await invoke(admin, 'gone')).body.greeting).toBe('');
    expect((await call('PATCH', '/v1/agents/gone/env', admin, { set: { GREETING: 'salut' } })).status).toBe(200);
    expect((await invoke(admin, 'gone')).body.greeting).toBe('salut');
    expect((await call('DELETE', '/v1/agents/gone', admin)).status).toBeLessThan(300);
    const after = await invoke(admin, 'gone');
    expect(after.status).toBe(404);
    expect(after.body.error).toMatch(/unknown agent gone/);
  }, 90_000);

  it('memory turned on is seen by the next invoke asking to memorize, and off again by the one after', async () => {
    const off = await invoke(admin, 'echo', { message: 'remember me', memorize: true });
    expect(off.status).toBe(409);
    expect((await invoke(admin, 'echo', { message: 'remember me', memorize: true })).status).toBe(409);
    expect((await call('PUT', '/v1/agents/echo/memory/policy', admin, { enabled: true })).status).toBe(200);
    expect((await invoke(admin, 'echo', { message: 'remember me', memorize: true })).status).toBe(200);
    expect((await call('PUT', '/v1/agents/echo/memory/policy', admin, { enabled: false })).status).toBe(200);
    expect((await invoke(admin, 'echo', { message: 'remember me', memorize: true })).status).toBe(409);
  }, 60_000);

  it('a session the daemon named: its next turn reads the first, and both survive kill -9', async () => {
    const first = await invoke(admin, 'echo', { message: 'm1' });
    expect(first.status).toBe(200);
    const sid = first.body.session_id as string;
    expect(sid).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(first.body.seen).toEqual([]);
    const second = await invoke(admin, 'echo', { message: 'm2', session_id: sid });
    expect(second.body).toMatchObject({ output: 'turn 2: m2', seen: ['m1'] });

    d.child.kill('SIGKILL');
    await d.exited;
    d = await spawnDaemonProcess(home, { PLATFORM_SCALE_TO_ZERO_SECONDS: '600' });
    admin = await loginToken(d.url, PROCESS_ADMIN);
    const s = await call('GET', `/v1/agents/echo/sessions/${sid}`, admin);
    expect(s.status, JSON.stringify(s.body)).toBe(200);
    expect(s.body.turns.map((t: { index: number; message: string }) => `${t.index}:${t.message}`)).toEqual(['1:m1', '2:m2']);
  }, 60_000);
});
