import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runtimeAvailable } from '../../src/daemon/runtimes/index.js';
import { cliSandbox } from '../helpers/cli.js';
import { DAEMON_MAIN } from '../helpers/daemon-process.js';
import { haveRedis } from '../cache/helpers.js';

/**
 * Issue 16 §4: `platform daemon stop` stops everything the daemon started (workload instances,
 * cache redis-servers), and `platform daemon start` brings them back with their data. Runs the
 * built CLI on a state directory of its own and looks at the machine's real processes.
 */
const python = await runtimeAvailable('python');
const ready = existsSync(DAEMON_MAIN) && haveRedis && python.ok;
if (!ready) console.warn(`SKIPPED daemon stop test: ${!existsSync(DAEMON_MAIN) ? 'run npm run build' : !haveRedis ? 'redis-server is missing' : python.reason}`);

const sb = cliSandbox({ INVOKE_AUTH_REQUIRED: 'false', PLATFORM_CACHE_HEALTH_INTERVAL_MS: '200' });
const home = sb.home;

/** Processes (other than this one) whose command line or working directory is under the state directory. */
function processesUnderHome(): { pid: number; cmd: string }[] {
  const found: { pid: number; cmd: string }[] = [];
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!pid || pid === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue; // a zombie is gone
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
      let cwd = '';
      try {
        cwd = readlinkSync(`/proc/${pid}/cwd`);
      } catch {
        // not ours to read
      }
      if (cmd.includes(home) || cwd.startsWith(home)) found.push({ pid, cmd });
    } catch {
      // exited while we looked
    }
  }
  return found;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return false;
  }
};

/** The pids of every redis-server this state directory has (its pid files). */
const redisPids = () =>
  existsSync(join(home, 'cache'))
    ? readdirSync(join(home, 'cache'))
        .map((id) => join(home, 'cache', id, 'redis.pid'))
        .filter((f) => existsSync(f))
        .map((f) => Number(readFileSync(f, 'utf8').trim()))
    : [];

async function cacheReady(name: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  let last: unknown;
  while (Date.now() < deadline) {
    const r = await sb.run(['cache', 'get', name, '--json']);
    last = r.json ?? r.stderr;
    if (r.json?.memorystore?.ready ?? r.json?.ready) return;
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error(`cache ${name} not ready: ${JSON.stringify(last)}`);
}

beforeAll(async () => {
  if (!ready) return;
  const dir = join(home, 'src', 'fn');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'main.py'), 'import os\n\ndef handle(event):\n    return {"reply": "hi " + str(event.get("message")), "pid": os.getpid()}\n');
  const start = await sb.run(['daemon', 'start']);
  expect(start.exitCode, start.stderr).toBe(0);
}, 60_000);

afterAll(async () => {
  // Whatever happened, nothing of this state directory is left running.
  await sb.stop();
  for (const p of processesUnderHome()) process.kill(p.pid, 'SIGKILL');
  for (const pid of redisPids()) if (alive(pid)) process.kill(pid, 'SIGKILL');
});

describe.skipIf(!ready)('daemon stop and start (issue 16 §4)', () => {
  it('stop leaves no workload process and no redis-server; start brings the cache data and the function back', { timeout: 120_000 }, async () => {
    const deployed = await sb.run(['deploy', join(home, 'src', 'fn'), '--name', 'fn', '--framework', 'function', '--runtime', 'python', '--wait']);
    expect(deployed.exitCode, deployed.stderr).toBe(0);
    const first = await sb.run(['invoke', 'fn', '-m', 'one', '--json']);
    expect(first.exitCode, first.stderr).toBe(0);
    expect(first.json.reply).toBe('hi one');
    const workloadPid = first.json.pid as number;

    // One cache with the append-only file (the default) and one without persistence: both keep
    // their data across a daemon stop and start.
    for (const [name, flags] of [
      ['durable', []],
      ['volatile', ['--no-persistence']],
    ] as const) {
      const created = await sb.run(['cache', 'create', name, '--wait', ...flags]);
      expect(created.exitCode, created.stderr).toBe(0);
      const set = await sb.run(['cache', 'connect', name, '--', 'SET', 'kept', `value of ${name}`]);
      expect(set.stdout.trim(), set.stderr).toBe('OK');
    }
    const servers = redisPids();
    expect(servers).toHaveLength(2);
    const daemonPid = (await sb.run(['daemon', 'status', '--json'])).json.pid as number;
    const before = processesUnderHome();
    expect(before.some((p) => p.pid === daemonPid || p.cmd.includes('shim'))).toBe(true);

    const stopped = await sb.run(['daemon', 'stop']);
    expect(stopped.exitCode, stopped.stderr).toBe(0);
    expect(alive(daemonPid)).toBe(false);
    // Nothing the daemon started is left: not the function's instance, not a redis-server.
    expect(processesUnderHome()).toEqual([]);
    expect(alive(workloadPid) && readFileSync(`/proc/${workloadPid}/cmdline`, 'utf8').includes(home)).toBe(false);
    for (const pid of servers) expect(alive(pid), `redis-server ${pid}`).toBe(false);

    const restarted = await sb.run(['daemon', 'start']);
    expect(restarted.exitCode, restarted.stderr).toBe(0);
    for (const name of ['durable', 'volatile']) {
      await cacheReady(name);
      const got = await sb.run(['cache', 'connect', name, '--', 'GET', 'kept']);
      expect(got.stdout.trim(), got.stderr).toBe(`value of ${name}`);
    }
    const again = await sb.run(['invoke', 'fn', '-m', 'two', '--json']);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.json.reply).toBe('hi two');
  });
});
