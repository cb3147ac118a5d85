import { execa, type ResultPromise } from 'execa';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliSandbox } from '../helpers/cli.js';

/**
 * Plain `platform logs NAME -f` against a real daemon that is stopped and started again (same state
 * directory, same port, as the local daemon's 7070 would be): the follow reconnects, prints the new
 * instance's line once and repeats nothing, also when the daemon comes back on another port; an agent
 * deleted while followed ends it with a message.
 */
const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'run.js');
const work = mkdtempSync(join(tmpdir(), 'platform-logs-restart-'));
let sb: ReturnType<typeof cliSandbox>;

beforeAll(async () => {
  // A fixed port: a restarted daemon is found where the follow left it. Scale to zero is far away.
  sb = cliSandbox({ PLATFORM_PORT: String(await freePort()), PLATFORM_SCALE_TO_ZERO_SECONDS: '120' });
  // Started first, so the two deploys below (side by side) find it rather than both starting one.
  expect((await sb.run(['daemon', 'start'])).exitCode).toBe(0);
  expect((await sb.run(['init', join(work, 'tailfn'), '--template', 'function-python'])).exitCode).toBe(0);
  expect((await sb.run(['init', join(work, 'gonefn'), '--template', 'function-python'])).exitCode).toBe(0);
  for (const deployed of await Promise.all(['tailfn', 'gonefn'].map((name) => sb.run(['deploy', join(work, name)])))) {
    expect(deployed.exitCode, deployed.stderr).toBe(0);
  }
}, 180_000);
afterAll(async () => {
  await sb?.stop();
  rmSync(work, { recursive: true, force: true });
});

/** `platform logs NAME -f` running in the background, its output collected as it comes. */
function follow(name: string) {
  const proc: ResultPromise = execa('node', [BIN, 'logs', name, '-f'], { env: sb.env, extendEnv: true, reject: false, stdin: 'ignore' });
  const out = { stdout: '', stderr: '' };
  proc.stdout!.on('data', (c: Buffer) => (out.stdout += c.toString()));
  proc.stderr!.on('data', (c: Buffer) => (out.stderr += c.toString()));
  const seen = async (re: RegExp, where: 'stdout' | 'stderr' = 'stdout', ms = 60_000) => {
    const end = Date.now() + ms;
    while (!re.test(out[where])) {
      if (Date.now() > end || proc.exitCode !== null) throw new Error(`never printed ${re} (exit ${proc.exitCode}); stdout:\n${out.stdout}\nstderr:\n${out.stderr}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  return { proc, out, seen };
}

describe('platform logs NAME -f across a daemon restart', { timeout: 180_000 }, () => {
  it('reconnects after the daemon is started again: the new line once, no old line repeated', async () => {
    expect((await sb.run(['invoke', 'tailfn', '-m', 'before'])).exitCode).toBe(0);
    const f = follow('tailfn');
    try {
      await f.seen(/stdout: greeting before\n/);
      const stopped = await sb.run(['daemon', 'stop']);
      expect(stopped.exitCode, stopped.stderr).toBe(0);
      // The follow notices and keeps trying (backoff) instead of ending.
      await f.seen(/live logs interrupted \(.+\); retrying in/, 'stderr');
      expect(f.proc.exitCode).toBeNull();
      const started = await sb.run(['daemon', 'start']);
      expect(started.exitCode, started.stderr).toBe(0);
      expect((await sb.run(['invoke', 'tailfn', '-m', 'after'])).exitCode).toBe(0);
      await f.seen(/stdout: greeting after\n/);
      // One more line through the same connection: anything a reconnect replayed has arrived by then.
      expect((await sb.run(['invoke', 'tailfn', '-m', 'later'])).exitCode).toBe(0);
      await f.seen(/stdout: greeting later\n/);
      expect(f.out.stdout.match(/greeting before\n/g)).toHaveLength(1);
      expect(f.out.stdout.match(/greeting after\n/g)).toHaveLength(1);
      const lines = f.out.stdout.trimEnd().split('\n');
      expect(new Set(lines).size).toBe(lines.length);
      // Every stdout line is a log line (`TS INSTANCE STREAM: MESSAGE`); the daemon's notes go to stderr.
      for (const l of lines) expect(l).toMatch(/^\S+Z tailfn-00001-[0-9a-f]{6} (stdout|stderr|system): /);
      expect(f.proc.exitCode).toBeNull();
    } finally {
      f.proc.kill('SIGINT');
      await f.proc;
    }
  });

  it('finds the daemon again when it comes back on another port (daemon start --port 0)', async () => {
    expect((await sb.run(['invoke', 'tailfn', '-m', 'first'])).exitCode).toBe(0);
    const f = follow('tailfn');
    try {
      await f.seen(/stdout: greeting first\n/);
      const before = JSON.parse((await sb.run(['daemon', 'status', '--json'])).stdout) as { url: string };
      expect((await sb.run(['daemon', 'stop'])).exitCode).toBe(0);
      await f.seen(/live logs interrupted \(.+\); retrying in/, 'stderr');
      const started = await sb.run(['daemon', 'start', '--port', '0', '--json']);
      expect(started.exitCode, started.stderr).toBe(0);
      const after = JSON.parse(started.stdout) as { url: string };
      expect(after.url).not.toBe(before.url);
      expect((await sb.run(['invoke', 'tailfn', '-m', 'moved'])).exitCode).toBe(0);
      await f.seen(/stdout: greeting moved\n/);
      expect(f.out.stdout.match(/greeting first\n/g)).toHaveLength(1);
      expect(f.proc.exitCode).toBeNull();
    } finally {
      f.proc.kill('SIGINT');
      await f.proc;
    }
  });

  it('an agent deleted while followed ends the follow with a message and exit 1', async () => {
    // The restart above left no instance running: a request starts one, whose lines the follow shows.
    expect((await sb.run(['invoke', 'gonefn', '-m', 'doomed'])).exitCode).toBe(0);
    const f = follow('gonefn');
    await f.seen(/stdout: greeting doomed\n/);
    const deleted = await sb.run(['agents', 'delete', 'gonefn', '--yes']);
    expect(deleted.exitCode, deleted.stderr).toBe(0);
    const r = await f.proc;
    expect(r.exitCode).toBe(1);
    expect(f.out.stderr).toMatch(/gonefn no longer exists \(deleted\): stopped following its logs/);
    expect(f.out.stdout).toMatch(/system: instance gonefn-00001-[0-9a-f]{6} stopping: workload deleted\n/);
  });

  it('a name that never existed is the 404 it always was', async () => {
    const r = await sb.run(['logs', 'nosuchfn', '-f']);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/unknown agent nosuchfn/);
    expect(r.stderr).not.toMatch(/no longer exists/);
  });
});
