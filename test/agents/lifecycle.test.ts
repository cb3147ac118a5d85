import { spawnSync } from 'node:child_process';
import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { cast } from '../helpers/fixtures.js';
import { HELLO_PY, archive, deployForm, sleep, waitState } from './helpers.js';

let d: TestDaemon;
let c: Awaited<ReturnType<typeof cast>>;
let token: string;
const q = () => `?project=${c.project.slug}`;
const IDLE_MS = 1000;
// The requirements.txt tests run the machine's pip (offline: only what is installed already).
const hasPip = spawnSync('python3', ['-m', 'pip', '--version']).status === 0;
if (!hasPip) console.warn('SKIPPED: requirements.txt tests: python3 -m pip is not available (apt-get install python3-pip)');

beforeAll(async () => {
  d = await startTestDaemon({
    invokeAuthRequired: false,
    workloads: { ...(await import('../../src/daemon/config.js')).workloadConfigFromEnv({}), idleMs: IDLE_MS, restartBackoffMs: 100, portMin: 31000, portMax: 31999 },
  });
  c = await cast(d);
  token = c.member.token;
});
afterAll(async () => d?.close());

const invoke = (name: string, message: string) => d.api('POST', `/v1/agents/${name}/invoke${q()}`, { body: { message } });
const portOpen = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = createConnection({ port, host: '127.0.0.1' });
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
  });
const instancesOf = (name: string) =>
  d.db.prepare('SELECT i.* FROM agents_instances i JOIN agents_agents a ON a.id = i.agent_id WHERE a.name = ?').all(name) as { id: string; port: number; pid: number }[];

describe('instances', () => {
  beforeAll(async () => {
    expect((await deployForm(d, token, { name: 'life', framework: 'function' }, archive({ 'main.py': HELLO_PY }), q())).status).toBe(202);
    await waitState(d, token, 'life', 'ready', c.project.slug);
  });

  it('scales to zero after idle and cold-starts on the next request', async () => {
    const warm = await invoke('life', 'one');
    expect(warm.status).toBe(200);
    const firstBoot = warm.body.boot;
    // Warm invoke latency through the daemon.
    const times: number[] = [];
    for (let i = 0; i < 30; i++) {
      const t = performance.now();
      await invoke('life', 'warm');
      times.push(performance.now() - t);
    }
    times.sort((a, b) => a - b);
    console.log(`warm invoke through the daemon: p50 ${times[15]!.toFixed(2)} ms, p99 ${times[29]!.toFixed(2)} ms`);
    const deadline = Date.now() + IDLE_MS * 5;
    while (instancesOf('life').length && Date.now() < deadline) await sleep(50);
    expect(instancesOf('life')).toHaveLength(0);
    const live = await d.api('GET', `/v1/agents/life/logs${q()}`, { token });
    expect(live.status).toBe(200);
    expect(live.text).toMatch(/no running instance: it is scaled to zero/);
    const t0 = performance.now();
    const cold = await invoke('life', 'two');
    const coldMs = performance.now() - t0;
    console.log(`cold start from zero (process driver, python): ${coldMs.toFixed(0)} ms`);
    expect(cold.status).toBe(200);
    expect(cold.body.reply).toBe('hello two');
    expect(cold.body.boot).not.toBe(firstBoot);
    const hist = await d.api('GET', `/v1/agents/life/logs/history${q()}`, { token });
    expect(hist.body.lines.some((l: any) => l.stream === 'system' && /scaled to zero after/.test(l.message))).toBe(true);
  });

  it('restarts a crashed instance with backoff; the crash shows in logs and message', async () => {
    await invoke('life', 'warm-up');
    const crashed = await invoke('life', 'crash');
    expect(crashed.status).toBe(502);
    await sleep(50);
    const view = await d.api('GET', `/v1/agents/life${q()}`, { token });
    expect(view.body.message).toMatch(/crashed \(exit code 3\)/);
    expect(view.body.state).toBe('ready');
    // The supervisor restarts it by itself after the backoff.
    const deadline = Date.now() + 5000;
    while (!instancesOf('life').length && Date.now() < deadline) await sleep(25);
    expect(instancesOf('life')).toHaveLength(1);
    expect((await invoke('life', 'after')).body.reply).toBe('hello after');
    const hist = await d.api('GET', `/v1/agents/life/logs/history${q()}`, { token });
    expect(hist.body.lines.some((l: any) => /crashed \(exit code 3\); restarting in 100 ms/.test(l.message))).toBe(true);
  });

  it('follows live logs as they are produced, across scale to zero and the next cold start', async () => {
    await invoke('life', 'prime');
    const ctrl = new AbortController();
    const res = await fetch(`${d.url}/v1/agents/life/logs${q()}&follow=true`, { headers: { authorization: `Bearer ${token}` }, signal: ctrl.signal });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let text = '';
    const until = async (needle: RegExp) => {
      const deadline = Date.now() + 10_000;
      while (!needle.test(text) && Date.now() < deadline) {
        const { value, done } = await reader.read();
        if (done) break;
        text += new TextDecoder().decode(value);
      }
      return needle.test(text);
    };
    try {
      await invoke('life', 'followed');
      expect(await until(/stdout: handling followed/)).toBe(true);
      // The instance scales to zero (idle 1 s); the tail stays open and picks up the next one.
      expect(await until(/stopping: scaled to zero/)).toBe(true);
      await invoke('life', 'woken');
      expect(await until(/stdout: handling woken/)).toBe(true);
      expect(text.match(/instance (life-00001-[0-9a-f]+) starting/g)?.length ?? 0).toBeGreaterThanOrEqual(2);
    } finally {
      ctrl.abort();
    }
  });

  it('delete stops every instance and frees its port', async () => {
    await invoke('life', 'before delete');
    const [inst] = instancesOf('life');
    expect(inst).toBeDefined();
    expect(await portOpen(inst!.port)).toBe(true);
    const del = await d.api('DELETE', `/v1/agents/life${q()}`, { token });
    expect(del.status).toBe(200);
    expect(del.body).toMatchObject({ deleted: true, agent: { name: 'life' } });
    expect(await portOpen(inst!.port)).toBe(false);
    expect(instancesOf('life')).toHaveLength(0);
    expect(() => process.kill(inst!.pid, 0)).toThrow();
    expect((await d.api('GET', `/v1/agents/life${q()}`, { token })).status).toBe(404);
    expect((await invoke('life', 'gone')).status).toBe(404);
  });
});

describe('failures', () => {
  it('a missing framework package fails the build naming requirements.txt', async () => {
    expect((await deployForm(d, token, { name: 'adk-agent', framework: 'adk' }, archive({ 'agent.py': 'root_agent = None\n' }), q())).status).toBe(202);
    const failed = await waitState(d, token, 'adk-agent', 'failed', c.project.slug);
    expect(failed.ready).toBe(false);
    expect(failed.message).toMatch(/"google-adk".*requirements\.txt/);
  });

  it.skipIf(!hasPip)('build output in message keeps its last 4000 characters behind a headline and a marker', async () => {
    const long = `${'x'.repeat(6000)}!!`;
    expect((await deployForm(d, token, { name: 'pipfail', framework: 'function' }, archive({ 'main.py': HELLO_PY, 'requirements.txt': `${long}\n` }), q())).status).toBe(202);
    const failed = await waitState(d, token, 'pipfail', 'failed', c.project.slug, 30_000);
    const [headline, marker, ...tail] = failed.message.split('\n');
    expect(headline).toMatch(/^revision pipfail-00001 failed to build: .*ERROR: Invalid requirement/);
    expect(marker).toMatch(/^\[build output truncated: \d+ earlier characters; the whole log: platform logs pipfail --build\]$/);
    expect(tail.join('\n').length).toBeLessThanOrEqual(4000);
    // The end of the output is kept: pip's own error and the step that failed.
    expect(failed.message).toMatch(/!!.*\n.*pip install -r requirements\.txt exited with code 1$/s);
  });

  it('a handler that cannot start fails deploying with its output', async () => {
    expect((await deployForm(d, token, { name: 'broken', framework: 'function' }, archive({ 'main.py': 'import nonexistent_module_xyz\n' }), q())).status).toBe(202);
    const failed = await waitState(d, token, 'broken', 'failed', c.project.slug);
    expect(failed.message).toMatch(/did not become ready/);
    expect(failed.message).toMatch(/nonexistent_module_xyz/);
  });

  it('a start failure names the file as uploaded: no state-directory path, no shim twin', async () => {
    const code = archive({ 'index.js': 'export async function handle(event) { return {\n' });
    expect((await deployForm(d, token, { name: 'badsyntax', framework: 'function', runtime: 'nodejs' }, code, q())).status).toBe(202);
    const failed = await waitState(d, token, 'badsyntax', 'failed', c.project.slug);
    expect(failed.message).toMatch(/SyntaxError/);
    expect(failed.message).toMatch(/^index\.js:\d+$/m);
    expect(failed.message).not.toContain(d.home);
    expect(failed.message).not.toContain('.platform-index.mjs');
  });

  it('a failed redeploy leaves the previous revision serving', async () => {
    expect((await deployForm(d, token, { name: 'keep', framework: 'function' }, archive({ 'main.py': HELLO_PY }), q())).status).toBe(202);
    await waitState(d, token, 'keep', 'ready', c.project.slug);
    expect((await d.api('PUT', `/v1/agents/keep/files/main.py${q()}`, { token, body: { content: 'import nonexistent_module_xyz\n' } })).status).toBe(200);
    expect((await invoke('keep', 'before')).status).toBe(200);
    const before = instancesOf('keep').map((i) => i.id);
    expect((await d.api('POST', `/v1/agents/keep/redeploy${q()}`, { token })).status).toBe(202);
    // Blue-green: while the new revision tries (twice) to start, every request is still answered
    // by the serving instance, which is never stopped or replaced.
    let deploying = true;
    const during: number[] = [];
    const caller = (async () => {
      while (deploying) during.push((await invoke('keep', 'during')).status);
    })();
    // The previous revision keeps answering, so the agent reads ready; the newer one is listed as failed.
    const kept = await waitState(d, token, 'keep', 'ready', c.project.slug).finally(() => (deploying = false));
    await caller;
    expect(during.length).toBeGreaterThan(0);
    expect(during.filter((status) => status !== 200)).toEqual([]);
    expect(instancesOf('keep').map((i) => i.id)).toEqual(before);
    expect(kept).toMatchObject({ latest_revision: 'keep-00002', serving_revision: 'keep-00001', ready: true });
    expect(kept.message).toMatch(/revision keep-00002 did not become ready.*\n\(keep-00001 keeps serving\)$/s);
    const revs = (await d.api('GET', `/v1/agents/keep/revisions${q()}`, { token })).body.revisions;
    expect(revs.map((r: any) => [r.name, r.state, r.serving])).toEqual([
      ['keep-00002', 'failed', false],
      ['keep-00001', 'ready', true],
    ]);
    expect(revs[0].message).toMatch(/nonexistent_module_xyz/);
    const served = await invoke('keep', 'still');
    expect(served.status).toBe(200);
    expect(served.body.reply).toBe('hello still');
    expect(instancesOf('keep').map((i: any) => i.revision)).toEqual(['keep-00001']);
  });

  it('the running-instance quota keeps a new revision deploying with numbers, then admits it', async () => {
    // The held request keeps the one admitted instance busy, so it cannot scale away meanwhile.
    // It waits on a loopback socket of the test: the sandboxed workload cannot see the test's files.
    const HOLD_PY = `import socket\ndef handle(event):\n    m = event.get("message") or ""\n    if m.startswith("hold:"):\n        s = socket.create_connection(("127.0.0.1", int(m[5:])))\n        s.recv(1)\n        s.close()\n    return {"ok": True}\n`;
    const waiting: Socket[] = [];
    const gate = createServer((sock) => waiting.push(sock));
    await new Promise<void>((r) => gate.listen(0, '127.0.0.1', r));
    const releaseHeld = () => {
      for (const sock of waiting) sock.end('x');
      gate.close();
    };
    expect((await deployForm(d, token, { name: 'quota', framework: 'function' }, archive({ 'main.py': HOLD_PY }), q())).status).toBe(202);
    await waitState(d, token, 'quota', 'ready', c.project.slug);
    const running = () => (d.db.prepare(`SELECT COUNT(*) AS n FROM agents_instances i JOIN agents_agents a ON a.id = i.agent_id WHERE a.project_id = ?`).get(c.project.id) as { n: number }).n;
    const held = invoke('quota', `hold:${(gate.address() as AddressInfo).port}`);
    try {
      while (!instancesOf('quota').length) await sleep(20);
      // Other instances of the project scale away (idle 1 s); only the held one counts.
      while (running() > 1) await sleep(50);
      d.db.prepare(`UPDATE acct_project_quotas SET value = 1 WHERE project_id = ? AND resource = 'instances'`).run(c.project.id);
      expect((await deployForm(d, token, { name: 'quota2', framework: 'function' }, archive({ 'main.py': HELLO_PY }), q())).status).toBe(202);
      // Quota not admitting is a not-ready condition: deploying, with the numbers in message (spec 1 §3).
      const deadline = Date.now() + 15_000;
      let view: any;
      do {
        view = (await d.api('GET', `/v1/agents/quota2${q()}`, { token })).body;
        if (/running-instance limit/.test(view.message ?? '')) break;
        await sleep(25);
      } while (Date.now() < deadline);
      expect(view).toMatchObject({ state: 'deploying', ready: false });
      expect(view.message).toMatch(/running-instance limit: 1 of 1/);
      // A cold start of another agent is refused the same way, as a 503 to retry.
      const refused = await invoke('keep', 'cold');
      expect(refused.status).toBe(503);
      expect(refused.body.error).toMatch(/running-instance limit: 1 of 1 instances in use/);
      expect(refused.headers.get('retry-after')).toBe('5');
      releaseHeld();
      expect((await held).status).toBe(200);
      // Once the held instance scales to zero the waiting revision is admitted.
      const ready = await waitState(d, token, 'quota2', 'ready', c.project.slug);
      expect(ready.message).toBeUndefined();
    } finally {
      releaseHeld();
      d.db.prepare(`UPDATE acct_project_quotas SET value = 50 WHERE project_id = ? AND resource = 'instances'`).run(c.project.id);
    }
  });

  it('at the service quota a built revision waits in deploying with the numbers, then fails after the deploying limit', async () => {
    const w = d.app.ctx.config.workloads;
    const before = w.deployTimeoutMs;
    expect((await d.api('PUT', `/v1/agents/keep/files/main.py${q()}`, { token, body: { content: HELLO_PY.replace('"hello "', '"fixed "') } })).status).toBe(200);
    d.db.prepare(`UPDATE acct_project_quotas SET value = 1 WHERE project_id = ? AND resource = 'services'`).run(c.project.id);
    w.deployTimeoutMs = 1500;
    try {
      expect((await d.api('POST', `/v1/agents/keep/redeploy${q()}`, { token })).status).toBe(202);
      const waiting = await waitState(d, token, 'keep', 'deploying', c.project.slug);
      let view = waiting;
      // quota and quota2 (previous test) are ready: the project is at 1 of 1 at least.
      while (!/service limit/.test(view.message ?? '') && view.state === 'deploying') {
        await sleep(25);
        view = (await d.api('GET', `/v1/agents/keep${q()}`, { token })).body;
      }
      expect(view.message).toMatch(/project at its service limit: \d+ of 1 services used/);
      // Meanwhile the last revision that served keeps serving.
      expect((await invoke('keep', 'meanwhile')).body.reply).toBe('hello meanwhile');
      // Past the deploying limit the new revision fails; the old one still serves, so ready.
      const kept = await waitState(d, token, 'keep', 'ready', c.project.slug);
      expect(kept.message).toMatch(/service limit/);
      expect(kept.serving_revision).toBe('keep-00001');
    } finally {
      w.deployTimeoutMs = before;
      d.db.prepare(`UPDATE acct_project_quotas SET value = 30 WHERE project_id = ? AND resource = 'services'`).run(c.project.id);
    }
    expect((await d.api('POST', `/v1/agents/keep/redeploy${q()}`, { token })).status).toBe(202);
    await waitState(d, token, 'keep', 'ready', c.project.slug);
    expect((await invoke('keep', 'now')).body.reply).toBe('fixed now');
  });
});

describe('builds on the process driver', () => {
  it.skipIf(!hasPip)('installs requirements.txt into a virtual environment seeing system packages, cached by the file hash', async () => {
    // pip itself is on the machine: pip finds it through --system-site-packages and needs no network.
    const main = `import sys, pip\ndef handle(event):\n    return {"prefix": sys.prefix, "pip": pip.__version__}\n`;
    const files = { 'main.py': main, 'requirements.txt': 'pip\n' };
    for (const name of ['deps-a', 'deps-b']) {
      expect((await deployForm(d, token, { name, framework: 'function' }, archive(files), q())).status).toBe(202);
      await waitState(d, token, name, 'ready', c.project.slug, 60_000);
    }
    const output = (name: string) =>
      (d.db.prepare(`SELECT b.output FROM agents_builds b JOIN agents_agents a ON a.id = b.agent_id WHERE a.name = ? ORDER BY b.queued_at DESC LIMIT 1`).get(name) as { output: string }).output;
    expect(output('deps-a')).toMatch(/pip install -r requirements.txt/);
    expect(output('deps-b')).toMatch(/requirements.txt: reusing cached environment [0-9a-f]{16}/);
    const [a, b] = await Promise.all([invoke('deps-a', ''), invoke('deps-b', '')]);
    expect(a.body.prefix).toMatch(/cache\/venvs\/[0-9a-f]{16}$/);
    expect(b.body.prefix).toBe(a.body.prefix);
    expect(a.body.pip).toMatch(/^\d+\./);
  });

  it('the container framework needs the docker driver', async () => {
    expect((await deployForm(d, token, { name: 'boxed', framework: 'container' }, archive({ Dockerfile: 'FROM scratch\n' }), q())).status).toBe(202);
    const failed = await waitState(d, token, 'boxed', 'failed', c.project.slug);
    expect(failed.message).toMatch(/runs only under the docker driver; start the daemon with PLATFORM_DRIVER=docker/);
  });
});

describe('build queue limits', () => {
  it('a build that never reaches a builder slot fails with a message', async () => {
    const q2 = await startTestDaemon({
      workloads: { ...(await import('../../src/daemon/config.js')).workloadConfigFromEnv({}), buildConcurrency: 0, buildQueueWaitMs: 1500 },
    });
    try {
      const admin = await q2.adminToken();
      const code = archive({ 'main.py': HELLO_PY });
      const r = await deployForm(q2, admin, { name: 'stuck', framework: 'function' }, code, '?project=default');
      expect(r.status).toBe(202);
      const again = await deployForm(q2, admin, { name: 'stuck', framework: 'function' }, code, '?project=default');
      expect(again.status).toBe(409);
      const failed = await waitState(q2, admin, 'stuck', 'failed', 'default', 5000);
      expect(failed.message).toMatch(/the build never started/);
    } finally {
      await q2.close();
    }
  });
});
