import { execa } from 'execa';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { archive } from '../agents/helpers.js';
import { loginToken, PROCESS_ADMIN, spawnDaemonProcess, type DaemonProcess } from '../helpers/daemon-process.js';

/**
 * A daemon start answers /healthz before its areas have brought every workload back
 * (docs/decisions/speed-daemon.md): the restart after a kill -9 that interrupted a build is
 * healthy while the build is resumed, `platform daemon status` says what is still coming, and
 * then everything recorded is back: the agents, the cache and the index.
 */
const BIN = join(import.meta.dirname, '..', '..', 'bin', 'run.js');
const HELLO = 'def handle(event):\n    return {"reply": "hello " + str(event.get("message"))}\n';
const home = mkdtempSync(join(tmpdir(), 'platform-start-'));
const daemons: DaemonProcess[] = [];

afterAll(async () => {
  for (const d of daemons) {
    d.child.kill('SIGTERM');
    await d.exited;
  }
  rmSync(home, { recursive: true, force: true });
});

interface Reconciliation {
  state: 'reconciling' | 'done' | 'failed';
  areas: { started: number; total: number };
  workloads: Record<string, { done: number; total: number }>;
}

async function until<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 45_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('daemon start: healthy first, workloads back in the background', { timeout: 120_000 }, () => {
  it('answers /healthz while reconciling, daemon status shows progress, then every workload is back', async () => {
    const first = await spawnDaemonProcess(home, { PLATFORM_SCALE_TO_ZERO_SECONDS: '600' });
    daemons.push(first);
    const token = await loginToken(first.url, PROCESS_ADMIN);
    const api = async (d: DaemonProcess, method: string, path: string, body?: unknown) => {
      const r = await fetch(d.url + path, { method, headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
      const text = await r.text();
      return { status: r.status, body: text ? JSON.parse(text) : undefined };
    };
    const deploy = async (d: DaemonProcess, name: string) => {
      const form = new FormData();
      form.append('name', name);
      form.append('framework', 'function');
      form.append('runtime', 'python');
      form.append('code', new Blob([new Uint8Array(archive({ 'main.py': HELLO }))]), 'code.tar.gz');
      const r = await fetch(`${d.url}/v1/agents`, { method: 'POST', body: form, headers: { authorization: `Bearer ${token}` } });
      expect(r.status, await r.clone().text()).toBe(202);
    };
    const project = (await api(first, 'GET', '/v1/projects')).body.projects.find((p: { slug: string }) => p.slug === 'default').id as string;
    await deploy(first, 'ready-fn');
    expect((await api(first, 'POST', `/v1/projects/${project}/memorystores`, { name: 'kept' })).status).toBe(201);
    expect((await api(first, 'POST', `/v1/projects/${project}/indexes`, { name: 'kept', dimensions: 4, distance: 'cosine' })).status).toBeLessThan(300);
    await until('the first agent ready', async () => ((await api(first, 'GET', '/v1/agents/ready-fn')).body.state === 'ready' ? true : undefined));
    await until('the cache ready', async () => ((await api(first, 'GET', `/v1/projects/${project}/memorystores/kept`)).body.ready ? true : undefined));
    // A deploy whose build the kill interrupts: the next start resumes it in the background.
    await deploy(first, 'resumed-fn');
    first.child.kill('SIGKILL');
    await first.exited;

    const second = await spawnDaemonProcess(home, { PLATFORM_SCALE_TO_ZERO_SECONDS: '600' });
    daemons.push(second);
    const health = (await (await fetch(`${second.url}/healthz`)).json()) as { status: string; reconciliation: Reconciliation };
    expect(health.status).toBe('ok');
    // Healthy while the resumed build (a python environment to make) is still coming back.
    expect(health.reconciliation.state).toBe('reconciling');
    expect(health.reconciliation.workloads['agent builds and deploys']).toMatchObject({ total: 1 });
    expect(health.reconciliation.workloads['agent builds and deploys']!.done).toBe(0);

    const env = { ...process.env, PLATFORM_HOME: home, PLATFORM_NO_KEYCHAIN: '1', NO_COLOR: '1' };
    const status = await execa('node', [BIN, 'daemon', 'status', '--json'], { env, reject: false });
    expect(status.exitCode, status.stderr).toBe(0);
    const shown = JSON.parse(status.stdout) as { running: boolean; reconciliation: Reconciliation };
    expect(shown.running).toBe(true);
    expect(shown.reconciliation.workloads).toHaveProperty('agent builds and deploys');
    const human = await execa('node', [BIN, 'daemon', 'status'], { env, reject: false });
    expect(human.stdout).toMatch(/workloads\s+(reconciling: areas \d+\/\d+.*agent builds and deploys \d\/1|all back \(areas (\d+)\/\2.*agent builds and deploys 1\/1)/);

    const done = await until('reconciliation done', async () => {
      const r = ((await (await fetch(`${second.url}/healthz`)).json()) as { reconciliation: Reconciliation }).reconciliation;
      return r.state === 'done' ? r : undefined;
    });
    expect(done.areas.started).toBe(done.areas.total);
    expect(done.workloads['agent builds and deploys']).toEqual({ done: 1, total: 1 });
    expect(done.workloads.caches).toEqual({ done: 1, total: 1 });
    expect((await execa('node', [BIN, 'daemon', 'status'], { env, reject: false })).stdout).toMatch(/workloads\s+all back/);

    // Everything recorded is back: both agents answer, the cache is ready, the index is there.
    for (const name of ['ready-fn', 'resumed-fn']) {
      await until(`${name} ready`, async () => ((await api(second, 'GET', `/v1/agents/${name}`)).body.state === 'ready' ? true : undefined));
      const r = await api(second, 'POST', `/v1/agents/${name}/invoke`, { message: 'back' });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.reply).toBe('hello back');
    }
    await until('the cache ready again', async () => ((await api(second, 'GET', `/v1/projects/${project}/memorystores/kept`)).body.ready ? true : undefined));
    expect((await api(second, 'GET', `/v1/projects/${project}/indexes/kept`)).status).toBe(200);
  });
});
