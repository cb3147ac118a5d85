import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliSandbox } from '../helpers/cli.js';

/**
 * `platform agents traffic` against the daemon the CLI spawns (a real process): show, pin, set,
 * usage errors, and a split that survives a kill -9 of the daemon (docs/decisions/agents-traffic.md).
 */
const sb = cliSandbox({ PLATFORM_SCALE_TO_ZERO_SECONDS: '120' });
const work = mkdtempSync(join(tmpdir(), 'platform-agents-traffic-'));
const dir = join(work, 'tr');

const revisionOf = async (): Promise<string> => {
  const r = await sb.run(['invoke', 'tr', '-m', 'which', '--json']);
  expect(r.exitCode, r.stderr).toBe(0);
  return r.json.revision as string;
};

beforeAll(async () => {
  expect((await sb.run(['init', dir, '--template', 'function-python'])).exitCode).toBe(0);
  writeFileSync(join(dir, 'main.py'), 'import os\n\ndef handle(event):\n    return {"revision": os.environ.get("K_REVISION", "")}\n');
  const deploy = await sb.run(['deploy', dir]);
  expect(deploy.exitCode, deploy.stderr).toBe(0);
  // A settings change rolls tr-00002.
  const env = await sb.run(['agents', 'env', 'set', 'tr', 'MARKER=two']);
  expect(env.exitCode, env.stderr).toBe(0);
}, 120_000);
afterAll(async () => {
  await sb.stop();
  rmSync(work, { recursive: true, force: true });
});

describe('platform agents traffic', { timeout: 120_000 }, () => {
  it('shows the default split, pins a revision by number and sets a split with --to', async () => {
    const shown = await sb.run(['agents', 'traffic', 'tr', '--json']);
    expect(shown.exitCode, shown.stderr).toBe(0);
    expect(shown.json).toEqual({ agent: 'tr', traffic: [{ latest_revision: true, percent: 100 }], active_traffic: [{ revision_name: 'tr-00002', percent: 100 }] });

    const pinned = await sb.run(['agents', 'traffic', 'tr', '--pin', '1', '--json']);
    expect(pinned.exitCode, pinned.stderr).toBe(0);
    expect(pinned.json).toEqual({ agent: 'tr', traffic: [{ revision_name: 'tr-00001', percent: 100 }], active_traffic: [{ revision_name: 'tr-00001', percent: 100 }] });
    expect(await revisionOf()).toBe('tr-00001');

    // Human output this time: the split as set, then what is served.
    const human = await sb.run(['agents', 'traffic', 'tr', '-p', 'default', '--to', 'tr-00001=50', '--to', 'latest=50']);
    expect(human.exitCode, human.stderr).toBe(0);
    expect(human.stdout).toMatch(/^split: tr-00001 50%, latest 50%$/m);
    expect(human.stdout).toMatch(/^tr-00001\s+50%$/m);
    expect(human.stdout).toMatch(/^tr-00002\s+50%$/m);
    const [revs, get] = await Promise.all([sb.run(['agents', 'revisions', 'tr']), sb.run(['agents', 'get', 'tr'])]);
    expect(revs.stdout).toMatch(/^tr-00002 \* .* 50%$/m);
    expect(revs.stdout).toMatch(/^tr-00001 \* .* 50%$/m);
    expect(get.stdout).toMatch(/^traffic +tr-00001 50%, tr-00002 50%$/m);
  });

  it('refuses a bad split before and at the daemon, with exit codes and JSON errors', async () => {
    // Independent runs side by side: each is a CLI process with its own start-up.
    const [sum, unknown, missing, help] = await Promise.all([
      sb.run(['agents', 'traffic', 'tr', '--to', '1=60', '--to', 'latest=30', '--pin', '1', '--json']),
      sb.run(['agents', 'traffic', 'tr', '--to', '99=100', '--json']),
      sb.run(['agents', 'traffic', 'nope', '--json']),
      sb.run(['agents', 'traffic', '--help']),
    ]);
    expect(sum.exitCode).toBe(2);
    expect(sum.json.error).toBe('give --to or --pin, not both');
    expect(unknown.exitCode).toBe(1);
    expect(unknown.json).toMatchObject({ status: 400, error: 'traffic validation: traffic[0]: unknown revision tr-00099' });
    expect(missing.exitCode).toBe(1);
    expect(missing.json).toMatchObject({ status: 404, error: 'unknown agent nope' });
    expect(help.stdout).toMatch(/EXAMPLES[\s\S]*agents traffic hello --pin 1/);
  });

  it('a kill -9 of the daemon keeps the split: the restarted daemon routes by it', async () => {
    await sb.killDaemon();
    const shown = await sb.run(['agents', 'traffic', 'tr', '--json']);
    expect(shown.exitCode, shown.stderr).toBe(0);
    expect(shown.json.traffic).toEqual([
      { revision_name: 'tr-00001', percent: 50 },
      { latest_revision: true, percent: 50 },
    ]);
    // The rotation restarts with the daemon: any two requests in a row reach both revisions.
    const seen = await Promise.all([revisionOf(), revisionOf()]);
    expect(seen.sort()).toEqual(['tr-00001', 'tr-00002']);
    const back = await sb.run(['agents', 'traffic', 'tr', '--pin', 'latest', '--json']);
    expect(back.json).toEqual({ agent: 'tr', traffic: [{ latest_revision: true, percent: 100 }], active_traffic: [{ revision_name: 'tr-00002', percent: 100 }] });
  });
});
