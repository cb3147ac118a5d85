import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { cliSandbox } from '../helpers/cli.js';

const sb = cliSandbox();
afterAll(() => sb.stop());

/** Live daemon processes whose state directory is `home` (read from /proc, so none hides). */
function daemonsOf(home: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      const environ = readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0');
      if (/daemon[^\0]*\.js/.test(cmdline) && environ.includes(`PLATFORM_HOME=${home}`)) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

describe('commands started side by side on a fresh state directory', { timeout: 90_000 }, () => {
  it('share the one daemon the first of them starts', async () => {
    const runs = await Promise.all([1, 2, 3, 4].map(() => sb.run(['whoami', '--json'])));
    for (const r of runs) expect(r.exitCode, r.stderr).toBe(0);
    const status = await sb.run(['daemon', 'status', '--json']);
    expect(status.exitCode, status.stderr).toBe(0);
    expect(daemonsOf(sb.home)).toEqual([status.json.pid]);
  });
});
