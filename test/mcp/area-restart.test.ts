import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { open } from '../../src/daemon/crypto/sealed.js';
import { DAEMON_MAIN, loginToken, spawnDaemonProcess, type DaemonProcess } from '../helpers/daemon-process.js';
import { ADD_PY, sleep } from './area-helpers.js';

/**
 * A graceful restart and a kill -9 of the real daemon process keep an MCP server's versions, its
 * current version and its bearer; instances come back lazily on the next request; a build the
 * dead daemon had accepted is built again (docs/decisions/mcp.md).
 */
const home = mkdtempSync(join(tmpdir(), 'platform-mcp-restart-'));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  rmSync(home, { recursive: true, force: true });
});

async function start(): Promise<DaemonProcess & { internal: string; token: string }> {
  const p = await spawnDaemonProcess(home);
  children.push(p.child);
  const info = JSON.parse(readFileSync(join(home, 'daemon.json'), 'utf8')) as { internal_url: string };
  return { ...p, internal: info.internal_url, token: await loginToken(p.url) };
}

const call = async (url: string, token: string, method: string, path: string, body?: unknown) => {
  const r = await fetch(url + path, { method, headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: r.status, body: (await r.json()) as any };
};

/** The bearer as the daemon stores it, opened with the state directory's master key. */
function bearer(name: string): string {
  const db = new Database(join(home, 'platform.db'), { readonly: true });
  try {
    const row = db.prepare('SELECT id, bearer_sealed FROM mcp_servers WHERE name = ?').get(name) as { id: string; bearer_sealed: string };
    const key = Buffer.from(readFileSync(join(home, 'keys', 'secrets-master.key'), 'utf8').trim(), 'base64');
    return open(key, Buffer.from(row.bearer_sealed.slice('gcm1:'.length), 'base64'), `mcp:bearer:${row.id}`).toString('utf8');
  } finally {
    db.close();
  }
}

async function waitReady(url: string, token: string, path: string, version: number): Promise<any> {
  const deadline = Date.now() + 30_000;
  let last: any;
  while (Date.now() < deadline) {
    last = (await call(url, token, 'GET', path)).body.mcp_server;
    if (last?.version === version && last.state === 'ready') return last;
    await sleep(50);
  }
  throw new Error(`not ready at version ${version}: ${JSON.stringify(last)}`);
}

const toolsCall = async (serverUrl: string, b: string, a: number) => {
  const r = await fetch(`${serverUrl}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${b}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'add', arguments: { a, b: 0 } } }),
  });
  return { status: r.status, body: (await r.json()) as any };
};

describe.skipIf(!existsSync(DAEMON_MAIN))('MCP servers across restarts', () => {
  it('graceful restart and kill -9 keep versions, the running version and the bearer; an accepted build is built again', async () => {
    let d = await start();
    const project = (await call(d.url, d.token, 'GET', '/v1/projects/default')).body;
    const short = project.short ?? project.project?.short;
    const projectId = project.id ?? project.project?.id;
    const S = `/v1/projects/${projectId}/mcpservers`;
    expect((await call(d.url, d.token, 'POST', S, { name: 'keep' })).status).toBe(201);
    await call(d.url, d.token, 'PUT', `${S}/keep/tools/add`, { handler: ADD_PY });
    await waitReady(d.url, d.token, `${S}/keep`, 1);
    await call(d.url, d.token, 'PUT', `${S}/keep/tools/add`, { handler: ADD_PY.replace('return a + b', 'return a + b + 1000') });
    await waitReady(d.url, d.token, `${S}/keep`, 2);
    expect((await call(d.url, d.token, 'POST', `${S}/keep/versions/1:rollback`)).status).toBe(200);
    const b = bearer('keep');
    const url1 = `${d.internal}/mcp/${short}/keep`;
    expect((await toolsCall(url1, b, 1)).body.result.content[0].text).toBe('1');

    // Graceful stop and start.
    process.kill(d.pid, 'SIGTERM');
    await d.exited;
    d = await start();
    let s = (await call(d.url, d.token, 'GET', `${S}/keep`)).body.mcp_server;
    expect(s).toMatchObject({ state: 'ready', version: 1 });
    expect(s.url).toBe(`${d.internal}/mcp/${short}/keep`);
    expect(bearer('keep')).toBe(b);
    expect((await toolsCall(s.url, b, 5)).body.result.content[0].text).toBe('5');

    // kill -9 right after a publish was accepted: the build is redone by the next daemon.
    const accepted = await call(d.url, d.token, 'PUT', `${S}/keep/tools/add`, { handler: ADD_PY.replace('return a + b', 'return a * 10 + b') });
    expect(accepted.status).toBe(202);
    process.kill(d.pid, 'SIGKILL');
    await d.exited;
    d = await start();
    const versions = (await call(d.url, d.token, 'GET', `${S}/keep/versions`)).body.versions;
    expect(versions.map((v: any) => v.version)).toEqual([3, 2, 1]);
    s = await waitReady(d.url, d.token, `${S}/keep`, 3);
    expect((await toolsCall(s.url, b, 4)).body.result.content[0].text).toBe('40');
    const after = (await call(d.url, d.token, 'GET', `${S}/keep/versions`)).body.versions;
    expect(after.map((v: any) => [v.version, v.state, v.current])).toEqual([
      [3, 'ready', true],
      [2, 'ready', false],
      [1, 'ready', false],
    ]);
    expect(after[2].image_digest).toBe(versions[2].image_digest);

    // kill -9 with an instance running: it comes back lazily, same bearer, same version.
    process.kill(d.pid, 'SIGKILL');
    await d.exited;
    d = await start();
    s = (await call(d.url, d.token, 'GET', `${S}/keep`)).body.mcp_server;
    expect(s).toMatchObject({ state: 'ready', version: 3 });
    expect((await toolsCall(s.url, b, 2)).body.result.content[0].text).toBe('20');
    process.kill(d.pid, 'SIGTERM');
    await d.exited;
  }, 120_000);
});
