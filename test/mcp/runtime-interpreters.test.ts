import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mcpServerCommand } from '../../src/daemon/runtimes/index.js';
import { callBody, check, removeDir, serve, versionDir } from './runtime-helpers.js';

/**
 * The runtime is standard library only and must run on every Python the platform starts it
 * with: Debian's /usr/bin/python3 (the process driver on a plain machine) and the
 * platform-python:local image (the docker driver, where the version is /workload).
 */
const TOOLS = {
  add: `from typing import Optional\n\n@tool\ndef add(a: int, b: Optional[int] = None) -> dict:\n    """Adds."""\n    return {"sum": a + (b or 0)}\n`,
  later: `import asyncio\n\n@tool\nasync def later(text: str):\n    await asyncio.sleep(0)\n    return text.upper()\n`,
};

const debian = existsSync('/usr/bin/python3');
const image = (() => {
  try {
    return execFileSync('docker', ['image', 'inspect', 'platform-python:local'], { stdio: 'pipe', timeout: 10_000 }).length > 0;
  } catch {
    return false;
  }
})();
if (!debian) console.warn('SKIPPING Debian python3: /usr/bin/python3 is absent');
if (!image) console.warn('SKIPPING docker: the platform-python:local image (or docker) is unavailable');

let dir: string;
beforeAll(async () => {
  dir = await versionDir(TOOLS);
});
afterAll(() => removeDir(dir));

async function exercise(s: Awaited<ReturnType<typeof serve>>) {
  const list = await s.post({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
  expect(list.json.result.tools.map((t: { name: string }) => t.name)).toEqual(['add', 'later']);
  expect((await s.post(callBody('add', { a: 2, b: 3 }))).json.result.structuredContent).toEqual({ sum: 5 });
  expect((await s.post(callBody('later', { text: 'hi' }))).json.result.content).toEqual([{ type: 'text', text: 'HI' }]);
}

describe.skipIf(!debian)("Debian's /usr/bin/python3", () => {
  it('--check and --serve', async () => {
    const r = await check(dir, '/usr/bin/python3');
    expect([r.exitCode, r.stderr]).toEqual([0, '']);
    const s = await serve(dir, {}, { python: '/usr/bin/python3' });
    try {
      await exercise(s);
    } finally {
      await s.stop();
    }
  });
});

describe.skipIf(!image)('platform-python:local (the version at /workload, read-only)', () => {
  it('--check and --serve', async () => {
    const inImage = mcpServerCommand('/workload');
    const name = `mcp-runtime-test-${process.pid}-${Date.now()}`;
    const build = execFileSync('docker', ['run', '--rm', '-v', `${dir}:/workload`, ...Object.entries(inImage.build!.env!).flatMap(([k, v]) => ['-e', `${k}=${v.replace(dir, '/workload')}`]), 'platform-python:local', inImage.build!.cmd, ...inImage.build!.args], { stdio: 'pipe', timeout: 60_000 });
    expect(build.toString()).toBe('');
    const s = await serve(dir, {}, {
      launcher: (_start, env) => ({
        cmd: 'docker',
        args: ['run', '--rm', '--name', name, '--network', 'host', '-v', `${dir}:/workload:ro`, ...Object.entries({ ...env, PYTHONPATH: '/workload' }).flatMap(([k, v]) => ['-e', `${k}=${v}`]), 'platform-python:local', inImage.start.cmd, ...inImage.start.args],
        env: { PATH: process.env.PATH! },
      }),
    });
    try {
      await exercise(s);
      // SIGTERM (what a docker stop sends) ends the runtime promptly although it is PID 1.
      const t0 = Date.now();
      execFileSync('docker', ['stop', '--time', '20', name], { stdio: 'pipe', timeout: 30_000 });
      expect(Date.now() - t0).toBeLessThan(5000);
      await s.stop();
    } finally {
      try {
        execFileSync('docker', ['rm', '-f', name], { stdio: 'pipe', timeout: 20_000 });
      } catch {
        /* already gone */
      }
    }
  }, 90_000);
});
