import Database from 'better-sqlite3';
import { execa } from 'execa';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliSandbox } from '../helpers/cli.js';

// Scale to zero is far enough away that live logs always find the instance between steps.
const sb = cliSandbox({ PLATFORM_SCALE_TO_ZERO_SECONDS: '120' });
const work = mkdtempSync(join(tmpdir(), 'platform-agents-cli-'));
const dir = join(work, 'greeter');
const BIN = join(import.meta.dirname, '..', '..', 'bin', 'run.js');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Instances as the daemon recorded them (read-only; the daemon keeps writing). */
function instances(home: string, agent: string): { pid: number; port: number }[] {
  const db = new Database(join(home, 'platform.db'), { readonly: true });
  try {
    return db.prepare('SELECT i.pid, i.port FROM agents_instances i JOIN agents_agents a ON a.id = i.agent_id WHERE a.name = ?').all(agent) as { pid: number; port: number }[];
  } finally {
    db.close();
  }
}

beforeAll(async () => {
  const init = await sb.run(['init', dir, '--template', 'function-python']);
  expect(init.exitCode, init.stderr).toBe(0);
});
afterAll(async () => {
  await sb.stop();
  rmSync(work, { recursive: true, force: true });
});

// Every step runs the built CLI as its own process (about a second of oclif start-up on a loaded
// machine), so independent steps run side by side.
describe('platform deploy and friends', { timeout: 120_000 }, () => {
  it('init writes a template with its manifest', () => {
    expect(JSON.parse(readFileSync(join(dir, 'platform.json'), 'utf8'))).toEqual({ framework: 'function', runtime: 'python' });
    expect(readFileSync(join(dir, 'main.py'), 'utf8')).toMatch(/def handle\(event\)/);
  });

  it('deploys a directory, waits for ready and prints the public URL', async () => {
    writeFileSync(join(dir, '.platformignore'), 'secret.txt\n');
    writeFileSync(join(dir, 'secret.txt'), 'do not upload');
    writeFileSync(join(dir, '.gitignore'), '*.log\n');
    writeFileSync(join(dir, 'debug.log'), 'not uploaded either');
    const r = await sb.run(['deploy', dir]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/greeter is ready \(revision greeter-00001\)/);
    expect(r.stdout).toMatch(/url: +http:\/\/greeter-[a-z0-9]{6}\.apps\.localhost:\d+/);
    expect(r.stdout).toMatch(/invoke: platform invoke greeter -m "hello"/);
    expect(r.stderr).toMatch(/greeter: (building|deploying)/);
    // `platform files list` is the short form of `platform agents files list`.
    const files = await sb.run(['files', 'list', 'greeter', '--json']);
    expect(files.json.files.map((f: any) => f.path).sort()).toEqual(['.gitignore', '.platformignore', 'README.md', 'main.py', 'platform.json']);
  });

  it('invokes with --json, --stream, --data @file, --session and --user', async () => {
    const event = join(work, 'event.json');
    writeFileSync(event, JSON.stringify({ message: 'from file', dropped: true }));
    const [plain, streamed, data, status] = await Promise.all([
      sb.run(['invoke', 'greeter', '-m', 'cli', '--json']),
      sb.run(['invoke', 'greeter', '-m', 'streamed', '--stream']),
      sb.run(['invoke', 'greeter', '--data', `@${event}`, '--session', 'cli-session-0123456789abcdef', '--user', 'u:7', '--json']),
      sb.run(['status', '--once']),
    ]);
    expect(plain.exitCode, plain.stderr).toBe(0);
    expect(plain.json).toMatchObject({ reply: 'hello cli', user_id: 'admin@example.test' });
    expect(JSON.parse(streamed.stdout.trim()).reply).toBe('hello streamed');
    expect(data.json).toEqual({ reply: 'hello from file', session_id: 'cli-session-0123456789abcdef', user_id: 'u:7' });
    expect(status.stdout).toMatch(/^workloads +greeter +ready +\w+ greeter-00001 http:\/\/greeter-/m);
  });

  it('follows live logs with logs -f as lines are produced', async () => {
    const follow = execa('node', [BIN, 'logs', 'greeter', '-f'], { env: sb.env, reject: false });
    let out = '';
    follow.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    const until = async (text: string) => {
      const deadline = Date.now() + 30_000;
      while (!out.includes(text) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      return out.includes(text);
    };
    try {
      // The buffered lines arrive first; then a new invoke shows up while the command still runs.
      expect(await until('greeting cli')).toBe(true);
      expect((await sb.run(['invoke', 'greeter', '-m', 'tailed'])).exitCode).toBe(0);
      expect(await until('stdout: greeting tailed')).toBe(true);
      expect(follow.exitCode).toBeNull();
    } finally {
      follow.kill('SIGINT');
      await follow;
    }
  });

  it('lists, gets, shows logs, config and revisions, edits env and secrets', async () => {
    const [list, get, hist, live] = await Promise.all([
      sb.run(['agents', 'list']),
      sb.run(['agents', 'get', 'greeter', '--json']),
      sb.run(['logs', 'greeter', '--history', '--limit', '50', '--since', '2000-01-01T00:00:00Z']),
      sb.run(['logs', 'greeter']),
    ]);
    expect(list.stdout).toMatch(/^NAME +STATE +FRAMEWORK/m);
    expect(list.stdout).toMatch(/greeter +ready +function/);
    expect(get.json).toMatchObject({ name: 'greeter', state: 'ready', ready: true, runtime: 'python', latest_revision: 'greeter-00001' });
    expect(hist.stdout).toMatch(/stdout: greeting cli/);
    expect(live.exitCode).toBe(0);
    expect(live.stdout).toMatch(/stdout: greeting/);

    const [envSet, refused, secretSet, config] = await Promise.all([
      sb.run(['env', 'set', 'greeter', 'GREETING=hi', 'X=a=b']),
      sb.run(['agents', 'env', 'set', 'greeter', 'PATH=/x']),
      sb.run(['agents', 'secrets', 'set', 'greeter', 'TOKEN=abc']),
      sb.run(['agents', 'config', 'greeter', '--timeout', '120', '--size', 'small']),
    ]);
    expect(envSet.exitCode, envSet.stderr).toBe(0);
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toMatch(/PATH \(reserved\)/);
    expect(secretSet.exitCode, secretSet.stderr).toBe(0);
    const [env, secrets] = await Promise.all([sb.run(['env', 'list', 'greeter', '--json']), sb.run(['agents', 'secrets', 'list', 'greeter'])]);
    expect(env.json.env).toEqual({ GREETING: 'hi', X: 'a=b' });
    expect(secrets.stdout).toMatch(/TOKEN/);
    expect(secrets.stdout).not.toMatch(/abc/);
    expect(config.stdout).toMatch(/updated the config of greeter \(revision greeter-0000\d\)/);
    const [unsetSecret, unsetEnv] = await Promise.all([
      sb.run(['agents', 'secrets', 'unset', 'greeter', 'TOKEN']),
      sb.run(['env', 'unset', 'greeter', 'X']),
    ]);
    expect(unsetSecret.exitCode).toBe(0);
    expect(unsetEnv.exitCode).toBe(0);
    const revs = await sb.run(['agents', 'revisions', 'greeter', '--json']);
    const reasons = revs.json.revisions.map((r: any) => r.reason);
    expect(reasons.at(-1)).toBe('deploy');
    expect([...reasons].sort()).toEqual(['config', 'deploy', 'env', 'env', 'secrets', 'secrets']);
    expect(revs.json.revisions[0].name).toBe('greeter-00006');
  });

  it('edits a file and redeploys from stored source', async () => {
    const local = join(work, 'main.py');
    writeFileSync(local, readFileSync(join(dir, 'main.py'), 'utf8').replace('hello {name}', 'howdy {name}'));
    expect((await sb.run(['files', 'put', 'greeter', 'main.py', local])).exitCode).toBe(0);
    const [got, re] = await Promise.all([sb.run(['agents', 'files', 'get', 'greeter', 'main.py']), sb.run(['agents', 'redeploy', 'greeter'])]);
    expect(got.stdout).toMatch(/howdy/);
    expect(re.exitCode, re.stderr).toBe(0);
    expect(re.stdout).toMatch(/greeter is ready/);
    expect((await sb.run(['invoke', 'greeter', '-m', 'again', '--json'])).json.reply).toBe('howdy again');
  });

  it('shows the build output when a deploy fails', async () => {
    const bad = join(work, 'bad');
    await sb.run(['init', bad, '--template', 'agent-adk']);
    // Without network pip would spend its retries on google-adk; the import check fails at once.
    rmSync(join(bad, 'requirements.txt'));
    const r = await sb.run(['deploy', bad, '--name', 'bad-agent']);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/bad-agent failed to deploy/);
    expect(r.stderr).toMatch(/google-adk/);
  });

  it('daemon kill -9: a restarted daemon reaps what the killed one left and serves again from the database', async () => {
    const [orphan] = instances(sb.home, 'greeter');
    expect(orphan, 'greeter has a running instance').toBeDefined();
    const daemonPid = (JSON.parse(readFileSync(join(sb.home, 'daemon.json'), 'utf8')) as { pid: number }).pid;
    process.kill(daemonPid, 'SIGKILL');
    while (alive(daemonPid)) await sleep(20);
    // Sandboxed (bwrap --die-with-parent) the instance dies with the daemon; unsandboxed it
    // outlives it in its own process group. Either way none is left once a daemon runs again.
    // The next command starts a daemon again; its start-up reconciles from the database.
    const after = await sb.run(['agents', 'get', 'greeter', '--json']);
    expect(after.exitCode, after.stderr).toBe(0);
    expect(after.json).toMatchObject({ name: 'greeter', state: 'ready', latest_revision: 'greeter-00007' });
    const deadline = Date.now() + 5000;
    while (alive(orphan!.pid) && Date.now() < deadline) await sleep(25);
    expect(alive(orphan!.pid)).toBe(false);
    expect((await sb.run(['invoke', 'greeter', '-m', 'after', '--json'])).json.reply).toBe('howdy after');
    expect(instances(sb.home, 'greeter').map((i) => i.pid)).not.toContain(orphan!.pid);
  });

  it('deletes', async () => {
    const r = await sb.run(['agents', 'delete', 'greeter', '--json', '--yes']);
    expect(r.json).toMatchObject({ deleted: true, agent: { name: 'greeter' } });
    const gone = await sb.run(['agents', 'get', 'greeter']);
    expect(gone.exitCode).toBe(1);
    expect(gone.stderr).toMatch(/unknown agent greeter/);
  });
});
