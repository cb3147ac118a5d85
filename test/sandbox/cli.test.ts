import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cliSandbox } from '../helpers/cli.js';

/** `platform sandbox exec` and `platform sandbox pool` through the real CLI and its daemon. */
const cli = cliSandbox({ PLATFORM_SANDBOX_POOL_TARGET: '2' });
afterAll(() => cli.stop());

describe('platform sandbox', () => {
  it('exec -c prints stdout and stderr and exits with the code exit code', async () => {
    const ok = await cli.run(['sandbox', 'exec', '-c', 'print(6 * 7)']);
    expect(ok).toMatchObject({ exitCode: 0, stdout: '42' });
    const failing = await cli.run(['sandbox', 'exec', '-c', 'import sys\nprint("out")\nprint("err", file=sys.stderr)\nsys.exit(5)']);
    expect(failing.exitCode).toBe(5);
    expect(failing.stdout).toBe('out');
    expect(failing.stderr).toBe('err');
  });

  it('exec FILE with --file inputs and --timeout; a deadline exits 124', async () => {
    const script = join(cli.home, 'script.py');
    writeFileSync(script, 'print(open("in/data.txt").read().upper())\n');
    const local = join(cli.home, 'data.txt');
    writeFileSync(local, 'local bytes');
    const r = await cli.run(['sandbox', 'exec', script, '--file', `in/data.txt=${local}`, '--timeout', '10']);
    expect(r).toMatchObject({ exitCode: 0, stdout: 'LOCAL BYTES' });
    const late = await cli.run(['sandbox', 'exec', '-c', 'import time\ntime.sleep(5)', '--timeout', '1']);
    expect(late.exitCode).toBe(124);
    expect(late.stderr).toBe('timed out after 1s');
    const fromStdin = await cli.run(['sandbox', 'exec', '-'], { input: 'print("piped")' });
    expect(fromStdin.stdout).toBe('piped');
  });

  it('--json carries the result; usage errors exit 2', async () => {
    const r = await cli.run(['sandbox', 'exec', '-c', 'print(1)', '--json']);
    expect(r.exitCode).toBe(0);
    expect(r.json).toMatchObject({ stdout: '1\n', stderr: '', exit_code: 0 });
    expect(r.json.sandbox_id).toMatch(/^sbx-/);
    const bad = await cli.run(['sandbox', 'exec', '-c', 'import sys; sys.exit(3)', '--json']);
    expect(bad.exitCode).toBe(3);
    expect(bad.json.exit_code).toBe(3);
    expect((await cli.run(['sandbox', 'exec'])).exitCode).toBe(2);
    expect((await cli.run(['sandbox', 'exec', '-c', 'print(1)', '--file', 'nolocal'])).exitCode).toBe(2);
    const escape = await cli.run(['sandbox', 'exec', '-c', 'print(1)', '--file', `../x=${join(cli.home, 'data.txt')}`]);
    expect(escape.exitCode).toBe(1);
    expect(escape.stderr).toMatch(/escapes the working directory/);
  });

  it('pool shows the warm pool; daemon status reports the sandbox listener', async () => {
    const r = await cli.run(['sandbox', 'pool', '--json']);
    expect(r.exitCode).toBe(0);
    expect(r.json).toMatchObject({ target: 2 });
    expect(Object.keys(r.json).sort()).toEqual(['created_total', 'in_flight', 'target', 'warm']);
    const human = await cli.run(['sandbox', 'pool']);
    expect(human.stdout).toMatch(/warm\s+\d/);
    const status = await cli.run(['daemon', 'status', '--json']);
    expect(status.json.sandbox_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(status.json.sandbox_url).not.toBe(status.json.url);
  });
});
