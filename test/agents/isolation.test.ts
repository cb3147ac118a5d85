import Docker from 'dockerode';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DockerDriver } from '../../src/daemon/runtime/docker-driver.js';
import { limitsKind, PIDS_MAX } from '../../src/daemon/runtime/limits.js';
import { isolationStatus } from '../../src/daemon/runtime/sandbox.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { cast } from '../helpers/fixtures.js';
import { ownWorkloadPorts } from '../secrets/agent-fixture.js';
import { archive, deployForm, waitState } from './helpers.js';

/**
 * Issue 16 §1: a deployed workload cannot read the daemon's state directory (signing key, admin
 * credential, database), another project's source or the daemon user's home, and cannot see
 * host processes. Each driver runs the same probe function.
 */
const PROBE_PY = `import json, os

def handle(event):
    # invoke passes only "message" through: the probe's orders travel in it as JSON.
    event = json.loads(event["message"])
    files = {}
    for p in event.get("paths", []):
        try:
            with open(p, "rb") as f:
                f.read(1)
            files[p] = "read"
        except Exception as e:
            files[p] = type(e).__name__
    listed = {}
    for p in event.get("dirs", []):
        try:
            listed[p] = os.listdir(p)
        except Exception as e:
            listed[p] = type(e).__name__
    try:
        os.kill(int(event.get("daemon_pid", 1)), 0)
        signal = "delivered"
    except Exception as e:
        signal = type(e).__name__
    try:
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "written"), "w") as f:
            f.write("x")
        own = "written"
    except Exception as e:
        own = type(e).__name__
    pids = sorted(int(n) for n in os.listdir("/proc") if n.isdigit())
    # What a workload may do: write its private temp dir and HOME, take a multiprocessing lock.
    try:
        import multiprocessing, tempfile
        multiprocessing.Lock()
        with tempfile.NamedTemporaryFile(dir=os.environ.get("HOME", "/tmp")) as f:
            f.write(b"x")
        usable = "ok"
    except Exception as e:
        usable = type(e).__name__ + ": " + str(e)
    return {"files": files, "dirs": listed, "pids": pids, "signal": signal, "own_source": own, "uid": os.getuid(), "usable": usable}
`;

const VICTIM_PY = `def handle(event):
    return {"reply": "victim"}
`;

/**
 * The victim's deployed source on the host (the path a neighbour would try): under the state
 * directory for the process driver, in its running container's root for the docker driver.
 */
async function findVictimSource(d: TestDaemon, marker: string): Promise<string> {
  const row = d.db.prepare(`SELECT i.container FROM agents_instances i JOIN agents_agents a ON a.id = i.agent_id WHERE a.name = 'victim'`).get() as { container: string | null };
  if (row.container) {
    const info = await new Docker().getContainer(row.container).inspect();
    return join((info.GraphDriver.Data as Record<string, string>).MergedDir!, 'workload', 'main.py');
  }
  const root = join(d.home, 'workloads');
  const stack = [root];
  while (stack.length) {
    const dir = stack.pop()!;
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      const st = statSync(p);
      if (st.isDirectory()) stack.push(p);
      else if (name === 'main.py' && readFileSync(p, 'utf8').includes(marker)) return p;
    }
  }
  throw new Error('victim source not found under the state directory');
}

const victimId = (d: TestDaemon) => (d.db.prepare(`SELECT id FROM agents_agents WHERE name = 'victim'`).get() as { id: string }).id;

interface Probe {
  files: Record<string, string>;
  dirs: Record<string, unknown>;
  pids: number[];
  signal: string;
  own_source: string;
  uid: number;
  usable: string;
}

/** Deploys the victim (second project) and the probe, then asks the probe to try everything. */
async function attack(d: TestDaemon, secretFile: string): Promise<{ probe: Probe; targets: string[] }> {
  const c = await cast(d);
  const token = await d.adminToken();
  const marker = `victim-${randomBytes(4).toString('hex')}`;
  expect((await deployForm(d, c.member.token, { name: 'victim', framework: 'function', runtime: 'python' }, archive({ 'main.py': `# ${marker}\n${VICTIM_PY}` }), `?project=${c.project.slug}`)).status).toBe(202);
  expect((await deployForm(d, token, { name: 'probe', framework: 'function', runtime: 'python' }, archive({ 'main.py': PROBE_PY }))).status).toBe(202);
  await waitState(d, c.member.token, 'victim', 'ready', c.project.slug, 170_000);
  await waitState(d, token, 'probe', 'ready', '', 170_000);
  const targets = [join(d.home, 'keys', 'signing.key'), join(d.home, 'keys', 'admin.json'), join(d.home, 'platform.db'), await findVictimSource(d, marker), secretFile];
  // Each target exists on the host: a failed read below is the sandbox, not a wrong path.
  for (const t of targets.filter((t) => !t.endsWith('admin.json'))) expect(existsSync(t), t).toBe(true);
  const r = await d.api('POST', '/v1/agents/probe/invoke', {
    token,
    body: { message: JSON.stringify({ paths: targets, dirs: [d.home, join(d.home, 'keys'), join(d.home, 'workloads'), homedir()], daemon_pid: process.pid }) },
  });
  expect(r.status, r.text).toBe(200);
  return { probe: r.body as Probe, targets };
}

function expectNothingReached(probe: Probe, targets: string[], home: string, victimId: string): void {
  // Every attempt was made and failed (an error's name, never "read").
  for (const t of targets) expect(probe.files[t], t).toMatch(/Error$/);
  // Listings show at most the empty path down to the probe's own revision.
  const listed = (dir: string) => (Array.isArray(probe.dirs[dir]) ? (probe.dirs[dir] as string[]) : []);
  expect(Object.keys(probe.dirs)).toHaveLength(4);
  expect(listed(home)).not.toContain('keys');
  expect(listed(home)).not.toContain('platform.db');
  expect(probe.dirs[join(home, 'keys')]).toMatch(/Error$/);
  expect(listed(join(home, 'workloads'))).not.toContain(victimId);
  expect(listed(join(home, 'workloads')).length).toBeLessThanOrEqual(1);
  expect(listed(homedir())).not.toContain(basename(secretFile));
  // Its own PID namespace: the daemon is neither listed nor signalable.
  expect(probe.pids).not.toContain(process.pid);
  expect(probe.pids.length).toBeLessThan(10);
  expect(probe.signal).toBe('ProcessLookupError');
  expect(probe.own_source).not.toBe('written');
  expect(probe.usable).toBe('ok');
}

const secretFile = join(homedir(), `.platform-test-secret-${randomBytes(6).toString('hex')}`);
beforeAll(() => writeFileSync(secretFile, 'home secret\n', { mode: 0o600 }));
afterAll(() => rmSync(secretFile, { force: true }));

const sandbox = await isolationStatus('sandbox');
if (sandbox.state !== 'bubblewrap') console.warn(`SKIPPED: process driver isolation tests: ${sandbox.detail}`);

describe.skipIf(sandbox.state !== 'bubblewrap')('process driver: bubblewrap sandbox', { timeout: 180_000 }, () => {
  let d: TestDaemon;
  beforeAll(async () => {
    d = await startTestDaemon({ invokeAuthRequired: false, ...ownWorkloadPorts() });
  });
  afterAll(async () => d?.close());

  it('a function reads none of the state directory, another project, the home directory, nor sees host processes', async () => {
    const { probe, targets } = await attack(d, secretFile);
    expectNothingReached(probe, targets, d.home, victimId(d));
    if (process.getuid?.() === 0) expect(probe.uid).toBe(65534);
  });

  it('stopping an instance stops what it started, even a process that left its session', async () => {
    const token = await d.adminToken();
    const mark = `4242.${Math.floor(Math.random() * 1e6)}`;
    const spawner = `import subprocess\n\ndef handle(event):\n    p = subprocess.Popen(["sleep", "${mark}"], start_new_session=True)\n    return {"child": p.pid}\n`;
    expect((await deployForm(d, token, { name: 'spawner', framework: 'function', runtime: 'python' }, archive({ 'main.py': spawner }))).status).toBe(202);
    await waitState(d, token, 'spawner', 'ready', '', 170_000);
    expect((await d.api('POST', '/v1/agents/spawner/invoke', { body: { message: 'go' } })).status).toBe(200);
    const sleepers = () =>
      readdirSync('/proc')
        .filter((n) => /^\d+$/.test(n))
        .filter((n) => {
          try {
            return readFileSync(`/proc/${n}/cmdline`, 'utf8').split('\0').includes(mark);
          } catch {
            return false;
          }
        });
    expect(sleepers()).toHaveLength(1);
    expect((await d.api('DELETE', '/v1/agents/spawner', { token })).status).toBeLessThan(300);
    const deadline = Date.now() + 20_000;
    while (sleepers().length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(sleepers()).toEqual([]);
  });

  it('an instance runs under its size limits (spec 1 §8.4) and its cgroup goes with it', async () => {
    const row = d.db.prepare(`SELECT i.id FROM agents_instances i JOIN agents_agents a ON a.id = i.agent_id WHERE a.name = 'probe'`).get() as { id: string } | undefined;
    expect(row).toBeDefined();
    if (limitsKind() !== 'cgroup') {
      console.warn('SKIPPED: cgroup limits: no writable cgroup here, the process driver uses rlimits (docs/decisions/agents.md)');
      return;
    }
    const own = (ctrl: string) => {
      const line = readFileSync('/proc/self/cgroup', 'utf8').split('\n').find((l) => l.split(':')[1]?.split(',').includes(ctrl))!;
      return join('/sys/fs/cgroup', ctrl, line.split(':')[2]!, `platform-${row!.id}`);
    };
    expect(readFileSync(join(own('memory'), 'memory.limit_in_bytes'), 'utf8').trim()).toBe(String(1024 ** 3));
    expect(readFileSync(join(own('pids'), 'pids.max'), 'utf8').trim()).toBe(String(PIDS_MAX));
    expect(readFileSync(join(own('cpu'), 'cpu.cfs_quota_us'), 'utf8').trim()).toBe('100000');
    const token = await d.adminToken();
    expect((await d.api('DELETE', '/v1/agents/probe', { token })).status).toBeLessThan(300);
    const deadline = Date.now() + 20_000;
    while (existsSync(own('memory')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(existsSync(own('memory'))).toBe(false);
  });
});

const BASE = process.env.PLATFORM_DOCKER_IMAGE_PYTHON || 'platform-python:local';
const engine = await DockerDriver.available();
const hasBase = engine && (await new Docker().getImage(BASE).inspect().then(() => true, () => false));
const dockerReason = !engine ? 'no Docker engine answers (start dockerd --bridge=none --iptables=false)' : !hasBase ? `base image ${BASE} is missing (run scripts/build-base-images.sh python)` : '';
if (dockerReason) console.warn(`SKIPPED: docker driver isolation tests: ${dockerReason}`);

describe.skipIf(Boolean(dockerReason))('docker driver: non-root containers without the state directory', { timeout: 240_000 }, () => {
  let d: TestDaemon;
  beforeAll(async () => {
    const { workloads } = ownWorkloadPorts({ driver: 'docker' });
    d = await startTestDaemon({ invokeAuthRequired: false, workloads: { ...workloads!, dockerImages: { ...workloads!.dockerImages, python: BASE } } });
  });
  afterAll(async () => d?.close());

  it('a function reads none of the state directory, another project, the home directory, nor sees host processes', async () => {
    const { probe, targets } = await attack(d, secretFile);
    expectNothingReached(probe, targets, d.home, victimId(d));
    expect(probe.uid).toBe(65534);
    const row = d.db.prepare(`SELECT i.container FROM agents_instances i JOIN agents_agents a ON a.id = i.agent_id WHERE a.name = 'probe'`).get() as { container: string };
    const info = await new Docker().getContainer(row.container).inspect();
    expect(info.Config.User).toBe('65534:65534');
    expect(info.HostConfig.CapDrop).toEqual(['ALL']);
    expect(info.HostConfig.SecurityOpt).toContain('no-new-privileges');
    expect(info.HostConfig.ReadonlyRootfs).toBe(true);
    expect(info.HostConfig.PidsLimit).toBe(PIDS_MAX);
    expect(info.Mounts).toEqual([]);
    // On the host network the container's port is reachable, but it answers only the daemon's requests.
    const { port } = d.db.prepare(`SELECT i.port FROM agents_instances i JOIN agents_agents a ON a.id = i.agent_id WHERE a.name = 'probe'`).get() as { port: number };
    const direct = await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"message":"hi"}' });
    expect(direct.status).toBe(403);
    expect(await direct.text()).not.toMatch(/uid|signing|probe/);
  });

  it('a crashed container is removed', async () => {
    const token = await d.adminToken();
    const crash = `import os\n\ndef handle(event):\n    os._exit(3)\n`;
    expect((await deployForm(d, token, { name: 'crasher', framework: 'function', runtime: 'python' }, archive({ 'main.py': crash }))).status).toBe(202);
    await waitState(d, token, 'crasher', 'ready', '', 170_000);
    const row = d.db.prepare(`SELECT i.container FROM agents_instances i JOIN agents_agents a ON a.id = i.agent_id WHERE a.name = 'crasher'`).get() as { container: string };
    await d.api('POST', '/v1/agents/crasher/invoke', { body: { message: 'die' } });
    const docker = new Docker();
    const deadline = Date.now() + 20_000;
    let gone = false;
    while (!gone && Date.now() < deadline) {
      gone = await docker.getContainer(row.container).inspect().then(() => false, (e: { statusCode?: number }) => e.statusCode === 404);
      if (!gone) await new Promise((r) => setTimeout(r, 100));
    }
    expect(gone).toBe(true);
  });
});
