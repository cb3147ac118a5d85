import Docker from 'dockerode';
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DockerDriver } from '../../src/daemon/runtime/docker-driver.js';
import { OWNER_LABEL, ownerValue } from '../../src/daemon/services/serverless/runtime/ledger.js';
import { SERVER_PY, call, desired, harness, hostOf, source, template, waitFor, waitReport, type Harness } from './data-helpers.js';

/**
 * The data plane with images through a real dockerd (no network: each container's namespace has
 * only lo and the daemon's door, run as root here): a plain image with a command override honours $PORT, gets its limits, splits and scales; a missing image fails its
 * pull with the engine's message; a crashing container is not ready with its output; a daemon
 * that died (its plane abandoned, as kill -9 would) leaves containers and processes the next
 * one reaps. Skipped only when no Docker engine or base image is there.
 */
const IMAGE = 'platform-python:local';
const engine = await DockerDriver.available();
const hasImage = engine && (await new Docker().getImage(IMAGE).inspect().then(() => true, () => false));
const reason = !engine ? 'no Docker engine answers' : !hasImage ? `image ${IMAGE} is missing (scripts/build-base-images.sh python)` : '';
if (reason) console.warn(`SKIPPED: serverless docker data plane: ${reason}`);

const docker = new Docker();
const server = (n: number, name = 'img', extra = {}) => template(name, n, IMAGE, { command: ['python3', '-u', '-c'], args: [SERVER_PY], ...extra });

let h: Harness;
beforeAll(async () => {
  if (reason) return;
  h = await harness({ idleMs: 2000, startTimeoutMs: 15_000 });
});
afterAll(async () => h?.close());

describe.skipIf(Boolean(reason))('serverless data plane: docker images', { timeout: 180_000 }, () => {
  it('runs a plain image in its own network namespace with PORT, limits and labels; splits 50/50 and cold-starts from zero', async () => {
    const a = server(1, 'img', { env: { MSG: 'a' }, cpus: 0.5, memoryBytes: 256 * 1024 ** 2 });
    const b = server(2, 'img', { env: { MSG: 'b' } });
    const t0 = performance.now();
    h.plane.apply(desired('img', [a, b], [{ revision: a.revision, percent: 50 }, { revision: b.revision, percent: 50, tag: 'next' }]));
    await waitReport(h, 'svc-img', a.revision, 'ready');
    await waitReport(h, 'svc-img', b.revision, 'ready');
    console.log(`apply-to-ready (docker, two revisions): ${(performance.now() - t0).toFixed(0)} ms`);
    const list = await docker.listContainers({ filters: JSON.stringify({ label: [`${OWNER_LABEL}=${ownerValue(h.home)}`] }) });
    expect(list).toHaveLength(2);
    const info = await docker.getContainer(list.find((c) => c.Labels['platform.serverless.revision'] === a.revision)!.Id).inspect();
    expect(info.HostConfig.NetworkMode).toBe('none');
    expect(info.HostConfig.Memory).toBe(256 * 1024 ** 2);
    expect(info.HostConfig.NanoCpus).toBe(5e8);
    expect(info.Config.User).toBe('65534:65534');
    expect(info.Config.Env).toContain(`K_REVISION=${a.revision}`);

    const counts: Record<string, number> = {};
    for (let i = 0; i < 200; i++) {
      const r = await call(h, hostOf('img'));
      expect(r.status).toBe(200);
      // Each instance listens on its container_port in its own namespace.
      expect(r.body.port).toBe('8080');
      counts[r.body.revision] = (counts[r.body.revision] ?? 0) + 1;
    }
    console.log('docker 50/50 split over 200 requests:', counts);
    expect(Math.abs(counts[a.revision]! - 100)).toBeLessThanOrEqual(10);
    expect((await call(h, hostOf('img', 'next'))).body.msg).toBe('b');

    await waitFor('scale to zero', () => h.plane.instances('svc-img').every((i) => i.replicas === 0), 20_000);
    await waitFor('containers removed', () => execFileSync('docker', ['ps', '-aq', '--filter', `label=${OWNER_LABEL}=${ownerValue(h.home)}`]).toString().trim() === '', 20_000);
    const t1 = performance.now();
    const cold = await call(h, hostOf('img', 'next'));
    console.log(`cold start from zero (docker, python image): ${(performance.now() - t1).toFixed(0)} ms`);
    expect(cold.status).toBe(200);
    await h.plane.remove('svc-img');
  });

  it('a missing image fails its pull with the engine message; a crashing container is not ready with its output', async () => {
    const missing = template('broken', 1, 'registry.invalid/nobody/nothing:1');
    const crash = template('broken', 2, IMAGE, { command: ['python3', '-c'], args: ['import sys; print("fatal: no PORT handler", flush=True); sys.exit(3)'] });
    h.plane.apply(desired('broken', [missing, crash], [{ revision: missing.revision, percent: 100 }, { revision: crash.revision, percent: 0 }]));
    const m = await waitReport(h, 'svc-broken', missing.revision, 'not_ready');
    expect(m.reason).toBe('ImagePullFailed');
    expect(m.message).toMatch(/^failed to pull image registry\.invalid\/nobody\/nothing:1: .+/);
    console.log(`pull failure: ${m.message}`);
    const c = await waitReport(h, 'svc-broken', crash.revision, 'not_ready');
    expect(c.reason).toBe('ExitCode3');
    expect(c.message).toContain('fatal: no PORT handler');
    const res = await call(h, hostOf('broken'));
    expect(res.status).toBe(503);
    expect(res.body.error).toContain('failed to pull image');
    await h.plane.remove('svc-broken');
  });

  it('concurrency 1 scales a docker revision up to max_scale', async () => {
    const t = server(1, 'wide');
    h.plane.apply(desired('wide', [t], [{ revision: t.revision, percent: 100 }], { containerConcurrency: 1, maxScale: 2 }));
    await waitReport(h, 'svc-wide', t.revision, 'ready');
    const res = await Promise.all(Array.from({ length: 4 }, () => call(h, hostOf('wide'), '/?ms=800')));
    expect(new Set(res.map((r) => r.body.instance)).size).toBe(2);
    await h.plane.remove('svc-wide');
  });

  it('leftovers of a dead daemon (containers and processes) are reaped by the next one', async () => {
    const dead = await harness({ idleMs: 60_000, startTimeoutMs: 15_000 });
    const img = server(1, 'left');
    const src = template('left', 2, source(dead, { 'main.py': SERVER_PY }));
    dead.plane.apply(desired('left', [img, src], [{ revision: img.revision, percent: 50 }, { revision: src.revision, percent: 50 }], { minScale: 1 }));
    await waitReport(dead, 'svc-left', img.revision, 'ready');
    await waitReport(dead, 'svc-left', src.revision, 'ready');
    const containers = execFileSync('docker', ['ps', '-q', '--filter', `label=${OWNER_LABEL}=${ownerValue(dead.home)}`]).toString().trim().split('\n').filter(Boolean);
    expect(containers).toHaveLength(1);
    const pids = (dead.plane as any).ledger.entries().map((e: any) => e.pid).filter(Boolean) as number[];
    expect(pids).toHaveLength(1);
    expect(alive(pids[0]!)).toBe(true);
    // The image's door runs on the host (in the container's namespace): the ledger names it too.
    const doorPids = (dead.plane as any).ledger.entries().map((e: any) => e.doorPid).filter(Boolean) as number[];
    expect(doorPids).toHaveLength(1);
    expect(alive(doorPids[0]!)).toBe(true);
    // The daemon "dies": nothing is stopped, it only stops acting. A new plane on the same state directory reaps.
    clearInterval((dead.plane as any).sweeper);
    for (const svc of (dead.plane as any).services.values()) for (const pool of svc.pools.values()) pool.closed = true;
    const next = await harness({ home: dead.home });
    await next.plane.whenReaped();
    expect(execFileSync('docker', ['ps', '-aq', '--filter', `label=${OWNER_LABEL}=${ownerValue(dead.home)}`]).toString().trim()).toBe('');
    await waitFor('the process reaped', () => !alive(pids[0]!), 5_000);
    await waitFor('the door reaped', () => !alive(doorPids[0]!), 5_000);
    await next.close();
    (dead.plane as any).services.clear();
    await dead.close();
  });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
