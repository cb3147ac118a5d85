import Docker from 'dockerode';
import { execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { DockerDriver } from '../../src/daemon/runtime/docker-driver.js';
import { OWNER_LABEL, ownerValue } from '../../src/daemon/services/serverless/runtime/ledger.js';
import { loginToken, spawnDaemonProcess, type DaemonProcess } from '../helpers/daemon-process.js';
import { SERVER_PY, sleep } from './data-helpers.js';

/**
 * The real daemon process restarted gracefully and killed with -9 while a docker service runs:
 * no container leaks, and the next daemon brings min_scale instances back and serves again.
 * (Processes left by a dead daemon are reaped in data-docker.test.ts's leftovers case.)
 */
const home = mkdtempSync(join(tmpdir(), 'platform-sl-restart-'));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  try {
    execFileSync('docker', ['rm', '-f', ...containers()], { stdio: 'ignore' });
  } catch {
    // none
  }
  rmSync(home, { recursive: true, force: true });
});

const IMAGE = 'platform-python:local';
const useDocker = (await DockerDriver.available()) && (await new Docker().getImage(IMAGE).inspect().then(() => true, () => false));

function containers(): string[] {
  if (!useDocker) return [];
  return execFileSync('docker', ['ps', '-aq', '--filter', `label=${OWNER_LABEL}=${ownerValue(home)}`]).toString().trim().split('\n').filter(Boolean);
}

async function start(): Promise<DaemonProcess & { token: string }> {
  const p = await spawnDaemonProcess(home, { PLATFORM_SCALE_TO_ZERO_SECONDS: '60', PLATFORM_WORKLOAD_PORT_MIN: '37700', PLATFORM_WORKLOAD_PORT_MAX: '37799' });
  children.push(p.child);
  return { ...p, token: await loginToken(p.url) };
}

const call = async (p: { url: string; token: string }, method: string, path: string, body?: unknown) => {
  const r = await fetch(p.url + path, { method, headers: { 'content-type': 'application/json', authorization: `Bearer ${p.token}` }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.text();
  return { status: r.status, body: text ? JSON.parse(text) : undefined };
};

async function waitServing(p: { url: string; token: string }, base: string, replicas: number): Promise<any> {
  const deadline = Date.now() + 60_000;
  let last: any;
  while (Date.now() < deadline) {
    last = (await call(p, 'GET', `${base}/keep/metrics`)).body;
    if (last?.ready && last.revisions?.[0]?.replicas === replicas) return last;
    await sleep(50);
  }
  throw new Error(`not serving ${replicas} replicas: ${JSON.stringify(last)}`);
}

if (!useDocker) console.warn(`SKIPPED: serverless restart test: no Docker engine or no ${IMAGE}`);

describe.skipIf(!useDocker)('serverless data plane across daemon restarts', { timeout: 180_000 }, () => {
  it('reconciles a docker service after a graceful restart and a kill -9 without leaking a container', async () => {
    let d = await start();
    const project = (await call(d, 'POST', '/v1/projects', { slug: 'restart-proj' })).body.project;
    const base = `/v1/projects/${project.id}/services`;
    const spec = { image: IMAGE, command: ['python3', '-u', '-c'], args: [SERVER_PY] };
    const created = await call(d, 'POST', base, { name: 'keep', ...spec, publish: { enabled: true }, scaling: { min_scale: 2 } });
    expect(created.status).toBe(202);
    await waitServing(d, base, 2);
    expect(containers()).toHaveLength(2);
    const host = new URL(created.body.url).host;
    const hit = async () => {
      const r = await request(`${d.url}/`, { headers: { host: host.replace(/:\d+$/, '') } });
      return { status: r.statusCode, body: await r.body.text() };
    };
    expect((await hit()).status).toBe(200);

    // Graceful stop: every container goes with the daemon.
    d.child.kill('SIGTERM');
    await d.exited;
    expect(containers()).toEqual([]);
    d = await start();
    await waitServing(d, base, 2);
    expect((await hit()).status).toBe(200);
    const before = containers();
    expect(before).toHaveLength(2);

    // kill -9: the containers outlive it; the next daemon reaps them and starts its own.
    d.child.kill('SIGKILL');
    await d.exited;
    expect(containers().sort()).toEqual([...before].sort());
    d = await start();
    await waitServing(d, base, 2);
    const after = containers();
    expect(after).toHaveLength(2);
    expect(after.some((c) => before.some((b) => b.startsWith(c) || c.startsWith(b)))).toBe(false);
    expect((await hit()).status).toBe(200);
    // The ledger names only what runs now.
    expect(readdirSync(join(home, 'serverless', 'instances'))).toHaveLength(2);
    d.child.kill('SIGTERM');
    await d.exited;
    expect(containers()).toEqual([]);
  });
});
