import Database from 'better-sqlite3';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cliSandbox } from '../helpers/cli.js';
import { sleep } from './helpers.js';

const EXAMPLE = join(import.meta.dirname, '..', '..', 'examples', 'hello-python');
const sb = cliSandbox({ PLATFORM_SCALE_TO_ZERO_SECONDS: '600' });
afterAll(async () => sb.stop());

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const instances = () => {
  const db = new Database(join(sb.home, 'platform.db'), { readonly: true });
  try {
    return db.prepare('SELECT pid, port FROM agents_instances').all() as { pid: number; port: number }[];
  } finally {
    db.close();
  }
};

describe('daemon kill -9 and reconcile', { timeout: 180_000 }, () => {
  it('reaps the instances a killed daemon left and serves again from the database', async () => {
    const dep = await sb.run(['deploy', EXAMPLE, '--json']);
    expect(dep.exitCode, dep.stdout + dep.stderr).toBe(0);
    expect(dep.json.agent).toMatchObject({ name: 'hello', state: 'ready' });
    const first = await sb.run(['invoke', 'hello', '-m', 'before', '--json']);
    expect(first.json.reply).toBe('hello before');
    const [orphan] = instances();
    expect(orphan).toBeDefined();
    const daemonPid = (JSON.parse(readFileSync(join(sb.home, 'daemon.json'), 'utf8')) as { pid: number }).pid;
    process.kill(daemonPid, 'SIGKILL');
    while (alive(daemonPid)) await sleep(20);
    // The instance runs in its own process group, so it outlived the daemon.
    expect(alive(orphan!.pid)).toBe(true);

    const after = await sb.run(['agents', 'get', 'hello', '--json']);
    expect(after.exitCode, after.stderr).toBe(0);
    expect(after.json).toMatchObject({ name: 'hello', state: 'ready', latest_revision: 'hello-00001' });
    const deadline = Date.now() + 5000;
    while (alive(orphan!.pid) && Date.now() < deadline) await sleep(25);
    expect(alive(orphan!.pid)).toBe(false);
    const again = await sb.run(['invoke', 'hello', '-m', 'after', '--json']);
    expect(again.json.reply).toBe('hello after');
    expect(instances().map((i) => i.pid)).not.toContain(orphan!.pid);
  });
});
