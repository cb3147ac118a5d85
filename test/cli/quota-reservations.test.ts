import Database from 'better-sqlite3';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startedSandbox } from './small-things-helpers.js';
import { SERVER_PY } from '../serverless/data-helpers.js';

/**
 * Issue 25 §3: `quota` counts what running instances reserve (spec 1 §8.3, §8.4), through the
 * built CLI against the daemon it spawns. A medium function holds its own 1 CPU and 1 GiB plus a
 * proxy of 500m and 256 MiB against the limits; against the requests 10 percent of each CPU
 * (never below 100m) and all of the memory. Instances stay up (scale to zero is far away) until
 * deleted, so the figures change only when the test changes them.
 */
// A refused cache server is tried again with the backoff: short here, so freed room shows soon.
const sandbox = startedSandbox({ PLATFORM_SCALE_TO_ZERO_SECONDS: '600', PLATFORM_CACHE_RESTART_BACKOFF_MS: '200' });
const { cli } = sandbox;
const work = mkdtempSync(join(tmpdir(), 'platform-quota-'));
const SLOW = 180_000;

type Row = { resource: string; used: number; limit: number; by_source: Record<string, number> };
const ROWS = ['instances', 'cpu_requests', 'memory_requests', 'cpu_limits', 'memory_limits'] as const;

/** The agents area's share and the total of each row of `quota --json`. */
async function figures(): Promise<Record<(typeof ROWS)[number], { used: number; agents: number; mcp: number; cache: number; serverless: number; limit: number }>> {
  const r = await cli.run(['quota', '--json']);
  expect(r.exitCode, r.stderr).toBe(0);
  const rows = r.json.quotas as Row[];
  return Object.fromEntries(
    ROWS.map((name) => {
      const row = rows.find((q) => q.resource === name)!;
      return [name, { used: row.used, agents: row.by_source.agents!, mcp: row.by_source.mcp!, cache: row.by_source.cache!, serverless: row.by_source.serverless!, limit: row.limit }];
    }),
  ) as never;
}

/** `quota --json` again until `ok` holds (an instance stops a moment after its delete answered). */
async function figuresUntil(ok: (f: Awaited<ReturnType<typeof figures>>) => boolean): Promise<Awaited<ReturnType<typeof figures>>> {
  const end = Date.now() + 60_000;
  for (;;) {
    const f = await figures();
    if (ok(f) || Date.now() > end) return f;
  }
}

async function deployFunction(name: string, extra: string[] = []) {
  const dir = join(work, name);
  expect((await cli.run(['init', dir, '--template', 'function-python'])).exitCode).toBe(0);
  return cli.run(['deploy', dir, ...extra]);
}

/** Sets one quota of the default project in the daemon's database, as the quota tests of the agents area do. */
function setQuota(resource: string, value: number): void {
  const db = new Database(join(cli.home, 'platform.db'));
  try {
    db.pragma('busy_timeout = 5000');
    const changed = db.prepare(`UPDATE acct_project_quotas SET value = ? WHERE resource = ? AND project_id = (SELECT id FROM acct_projects WHERE slug = 'default')`).run(value, resource).changes;
    expect(changed).toBe(1);
  } finally {
    db.close();
  }
}

beforeAll(() => sandbox.start(), SLOW);
afterAll(async () => {
  await cli.stop();
  rmSync(work, { recursive: true, force: true });
}, 60_000);

describe('quota: CPU and memory of running instances', () => {
  it('a running medium function counts 0.2 CPU and 1280 MiB of requests, 1.5 CPU and 1280 MiB of limits; deleted, nothing', async () => {
    const before = await figures();
    for (const name of ROWS) expect(before[name], name).toMatchObject({ used: 0, agents: 0 });
    const deployed = await deployFunction('firstfn');
    expect(deployed.exitCode, deployed.stderr).toBe(0);
    const [running, human] = await Promise.all([figures(), cli.run(['quota'])]);
    expect(running).toMatchObject({
      instances: { used: 1, agents: 1, limit: 50 },
      cpu_requests: { used: 0.2, agents: 0.2, limit: 10 },
      memory_requests: { used: 1280, agents: 1280, limit: 20480 },
      cpu_limits: { used: 1.5, agents: 1.5, limit: 20 },
      memory_limits: { used: 1280, agents: 1280, limit: 40960 },
    });
    expect(human.stdout).toMatch(/^cpu_limits\s+1\.5\s+20\s+cpu\s+agents 1\.5, cache 0, mcp 0, serverless 0$/m);
    expect(human.stdout).toMatch(/^memory_requests\s+1280\s+20480\s+MiB\s+agents 1280, cache 0, mcp 0, serverless 0$/m);
    const deleted = await cli.run(['agents', 'delete', 'firstfn', '--yes']);
    expect(deleted.exitCode, deleted.stderr).toBe(0);
    const after = await figuresUntil((f) => f.instances.used === 0);
    for (const name of ROWS) expect(after[name], name).toMatchObject({ used: 0, agents: 0 });
  }, SLOW);

  it('a start past a CPU limit is refused with the numbers and the revision waits in deploying; nothing else changes; freed, it serves', async () => {
    const served = await deployFunction('keeper');
    expect(served.exitCode, served.stderr).toBe(0);
    const running = await figures();
    expect(running.cpu_limits).toMatchObject({ used: 1.5, agents: 1.5 });
    setQuota('cpu_limits', 2);
    try {
      // A small function: its own 500m and the proxy's 500m would make 2.5 CPU of 2.
      const waiting = await deployFunction('smallfn', ['--no-wait', '--config', '{"instance_size":"small"}']);
      expect(waiting.exitCode, waiting.stderr).toBe(0);
      const end = Date.now() + 90_000;
      let view: any;
      do {
        view = (await cli.run(['agents', 'get', 'smallfn', '--json'])).json;
      } while (!/cpu_limits limit/.test(view?.message ?? '') && Date.now() < end);
      expect(view).toMatchObject({ state: 'deploying', ready: false });
      expect(view.message).toContain('project at its cpu_limits limit: 1.5 of 2 CPU in use, and one more instance needs 1 CPU');
      // The refused start changed nothing: the same figures, and the running function still answers.
      expect(await figures()).toEqual({ ...running, cpu_limits: { ...running.cpu_limits, limit: 2 } });
      const invoked = await cli.run(['invoke', 'keeper', '-m', 'still']);
      expect(invoked.exitCode, invoked.stderr).toBe(0);
    } finally {
      setQuota('cpu_limits', 20);
    }
    // Room again: the waiting revision is admitted, and counts.
    const end = Date.now() + 90_000;
    let view: any;
    do {
      view = (await cli.run(['agents', 'get', 'smallfn', '--json'])).json;
    } while (view?.state !== 'ready' && Date.now() < end);
    expect(view).toMatchObject({ state: 'ready' });
    const both = await figuresUntil((f) => f.instances.used === 2);
    expect(both).toMatchObject({
      instances: { used: 2 },
      cpu_requests: { used: 0.4 },
      memory_requests: { used: 1280 + 768 },
      cpu_limits: { used: 2.5 },
      memory_limits: { used: 1280 + 768 },
    });
  }, SLOW);

  it('an MCP server counts a medium instance with its proxy; a version whose instance does not fit fails with the numbers and the serving one stays', async () => {
    const tool = (n: number) => `from platform_mcp import tool\n\n@tool\ndef add(a: int) -> int:\n    """Adds ${n}.\n\n    Args:\n        a: a number\n    """\n    return a + ${n}\n`;
    expect((await cli.run(['mcp', 'create', 'calc'])).exitCode).toBe(0);
    writeFileSync(join(work, 'add.py'), tool(1));
    const first = await cli.run(['mcp', 'tools', 'publish', 'calc', join(work, 'add.py'), '--wait']);
    expect(first.exitCode, first.stderr).toBe(0);
    const serving = await figuresUntil((f) => f.instances.mcp === 1);
    expect(serving).toMatchObject({ instances: { mcp: 1 }, cpu_requests: { mcp: 0.2 }, memory_requests: { mcp: 1280 }, cpu_limits: { mcp: 1.5 }, memory_limits: { mcp: 1280 } });
    // Exactly full: the new version's trial instance (1280 MiB more) does not fit.
    setQuota('memory_limits', serving.memory_limits.used);
    try {
      writeFileSync(join(work, 'add.py'), tool(2));
      const refused = await cli.run(['mcp', 'tools', 'publish', 'calc', join(work, 'add.py'), '--wait']);
      expect(refused.exitCode).toBe(1);
      expect(refused.stderr).toContain(`project at its memory_limits limit: ${serving.memory_limits.used} of ${serving.memory_limits.used} MiB in use, and one more instance needs 1280 MiB`);
      expect(refused.stderr).toMatch(/version 1 keeps serving/);
      const call = await cli.run(['mcp', 'call', 'calc', 'add', '--arg', 'a=1']);
      expect(call.exitCode, call.stderr).toBe(0);
      expect(call.stdout).toBe('2');
      expect(await figures()).toEqual({ ...serving, memory_limits: { ...serving.memory_limits, limit: serving.memory_limits.used } });
    } finally {
      setQuota('memory_limits', 40960);
    }
  }, SLOW);

  it('a cache server that does not fit stays provisioning with the numbers and starts once there is room', async () => {
    const before = await figures();
    expect(before.memory_requests.cache).toBe(0);
    setQuota('memory_requests', before.memory_requests.used);
    const view = async () => (await cli.run(['cache', 'get', 'spare', '--json'])).json;
    try {
      const created = await cli.run(['cache', 'create', 'spare', '--json']);
      expect(created.exitCode, created.stderr).toBe(0);
      const end = Date.now() + 60_000;
      let v: any;
      do v = await view();
      while (!/memory_requests limit/.test(v?.message ?? '') && Date.now() < end);
      expect(v).toMatchObject({ state: 'provisioning', ready: false });
      expect(v.message).toContain(`project at its memory_requests limit: ${before.memory_requests.used} of ${before.memory_requests.used} MiB in use, and one more instance needs 256 MiB`);
      expect(await figures()).toEqual({ ...before, memory_requests: { ...before.memory_requests, limit: before.memory_requests.used } });
    } finally {
      setQuota('memory_requests', 20480);
    }
    const end = Date.now() + 60_000;
    let v: any;
    do v = await view();
    while (v?.state !== 'ready' && Date.now() < end);
    expect(v).toMatchObject({ state: 'ready', ready: true });
    const after = await figures();
    expect(after).toMatchObject({ instances: { cache: 1 }, memory_requests: { cache: 256, used: before.memory_requests.used + 256 }, cpu_limits: { cache: 0 } });
  }, SLOW);

  it('a serverless revision whose instance does not fit is not ready with the numbers; with room, the next revision serves and counts', async () => {
    const src = join(work, 'web');
    mkdirSync(src, { recursive: true });
    writeFileSync(join(src, 'main.py'), SERVER_PY);
    const before = await figures();
    expect(before.cpu_limits.serverless).toBe(0);
    setQuota('cpu_limits', before.cpu_limits.used);
    try {
      const refused = await cli.run(['services', 'deploy', src, '--name', 'web', '--wait']);
      expect(refused.exitCode).toBe(1);
      expect(refused.stderr).toContain(`project at its cpu_limits limit: ${before.cpu_limits.used} of ${before.cpu_limits.used} CPU in use, and one more instance needs 1.5 CPU`);
      const revisions = await cli.run(['services', 'revisions', 'web']);
      expect(revisions.stdout).toMatch(/^web-00001\s+1\s+not_ready\s/m);
      expect(await figures()).toEqual({ ...before, cpu_limits: { ...before.cpu_limits, limit: before.cpu_limits.used } });
    } finally {
      setQuota('cpu_limits', 20);
    }
    const served = await cli.run(['services', 'deploy', src, '--name', 'web', '--env', 'MSG=room', '--wait']);
    expect(served.exitCode, served.stderr).toBe(0);
    const after = await figuresUntil((f) => f.instances.serverless === 1);
    // The default resources (requests 250m and 512Mi, limits 1 CPU and 512Mi) and the proxy.
    expect(after).toMatchObject({ instances: { serverless: 1 }, cpu_requests: { serverless: 0.35 }, memory_requests: { serverless: 768 }, cpu_limits: { serverless: 1.5 }, memory_limits: { serverless: 768 } });
  }, SLOW);
});
