import { execa } from 'execa';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliSandbox } from '../helpers/cli.js';

// Scale to zero is far away: the follow below finds the instance it expects.
const sb = cliSandbox({ PLATFORM_SCALE_TO_ZERO_SECONDS: '120' });
const work = mkdtempSync(join(tmpdir(), 'platform-logs-since-'));
const dir = join(work, 'sincefn');
const BIN = join(import.meta.dirname, '..', '..', 'bin', 'run.js');

/** Reruns `logs --since 1h --json` until a line with `message` is persisted (the capture writes in batches). */
async function persisted(message: string): Promise<void> {
  const end = Date.now() + 20_000;
  while (Date.now() < end) {
    const r = await sb.run(['logs', 'sincefn', '--since', '1h', '--json']);
    if (r.json?.lines?.some((l: { message: string }) => l.message === message)) return;
  }
  throw new Error(`${message} never reached the history`);
}

beforeAll(async () => {
  expect((await sb.run(['init', dir, '--template', 'function-python'])).exitCode).toBe(0);
  const deployed = await sb.run(['deploy', dir]);
  expect(deployed.exitCode, deployed.stderr).toBe(0);
  expect((await sb.run(['invoke', 'sincefn', '-m', 'early'])).exitCode).toBe(0);
  await persisted('greeting early');
}, 120_000);
afterAll(async () => {
  await sb.stop();
  rmSync(work, { recursive: true, force: true });
});

describe('platform logs --since', { timeout: 120_000 }, () => {
  it('a duration or an RFC 3339 time reads the persisted lines from then on, without --history', async () => {
    // An instant between the two invocations: only the second line is at or after it.
    const between = new Date().toISOString();
    expect((await sb.run(['invoke', 'sincefn', '-m', 'late'])).exitCode).toBe(0);
    await persisted('greeting late');
    const [recent, fromTime, future] = await Promise.all([
      sb.run(['logs', 'sincefn', '--since', '5m']),
      sb.run(['logs', 'sincefn', '--since', between, '--json']),
      sb.run(['logs', 'sincefn', '--since', '2099-01-01T00:00:00+01:00']),
    ]);
    expect(recent.exitCode, recent.stderr).toBe(0);
    expect(recent.stdout).toMatch(/^\S+Z sincefn-00001-[0-9a-f]{6} stdout: greeting early$/m);
    expect(recent.stdout).toMatch(/stdout: greeting late$/m);
    expect(fromTime.exitCode, fromTime.stderr).toBe(0);
    const messages = fromTime.json.lines.map((l: { message: string }) => l.message);
    expect(messages).toContain('greeting late');
    expect(messages).not.toContain('greeting early');
    expect(future.exitCode).toBe(0);
    expect(future.stdout).toBe('');
    expect(future.stderr).toMatch(/no persisted lines for sincefn since 2098-12-31T23:00:00\.000Z/);
  });

  it('with -f prints what was logged since then, then keeps following live', async () => {
    const follow = execa('node', [BIN, 'logs', 'sincefn', '--since', '1h', '-f'], { env: sb.env, extendEnv: true, reject: false, stdin: 'ignore' });
    let out = '';
    let err = '';
    follow.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    follow.stderr!.on('data', (c: Buffer) => (err += c.toString()));
    const seen = async (re: RegExp) => {
      const end = Date.now() + 30_000;
      while (!re.test(out)) {
        if (Date.now() > end) throw new Error(`never printed ${re}; got:\n${out}\nstderr:\n${err}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    try {
      await seen(/stdout: greeting early\n/);
      expect((await sb.run(['invoke', 'sincefn', '-m', 'followed'])).exitCode).toBe(0);
      await seen(/stdout: greeting followed\n/);
      // Each line once: the live stream's replay of recent lines is dropped.
      expect(out.match(/greeting early\n/g)).toHaveLength(1);
    } finally {
      follow.kill('SIGINT');
      await follow;
    }
  });

  it('a value that is neither a duration nor an RFC 3339 time is a usage error naming both forms', async () => {
    const [word, unit, date, build, json] = await Promise.all([
      sb.run(['logs', 'sincefn', '--since', 'yesterday']),
      sb.run(['logs', 'sincefn', '--since', '5x']),
      sb.run(['logs', 'sincefn', '--since', '2026-02-30T00:00:00Z']),
      sb.run(['logs', 'sincefn', '--since', '5m', '--build']),
      sb.run(['logs', 'sincefn', '--since', '5x', '--json']),
    ]);
    for (const r of [word, unit, date]) {
      expect(r.exitCode).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/--since ".*" is not a time: use a duration such as 30s, 5m, 1h, 2d or 1h30m, or an RFC 3339 time such as 2026-01-02T15:04:05Z/);
    }
    expect(build.exitCode).toBe(2);
    expect(build.stderr).toMatch(/--build/);
    expect(json.exitCode).toBe(2);
    expect(json.json.error).toMatch(/--since "5x" is not a time/);
  });
});
