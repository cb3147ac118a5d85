import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliSandbox } from '../helpers/cli.js';

const sb = cliSandbox({ PLATFORM_SCALE_TO_ZERO_SECONDS: '5' });
const work = mkdtempSync(join(tmpdir(), 'platform-agents-cli-'));
const dir = join(work, 'greeter');

beforeAll(async () => {
  const init = await sb.run(['init', dir, '--template', 'function-python']);
  expect(init.exitCode, init.stderr).toBe(0);
});
afterAll(async () => sb.stop());

// Every step runs the built CLI as its own process; on a loaded machine each costs seconds.
describe('platform deploy and friends', { timeout: 120_000 }, () => {
  it('init writes a template with its manifest', () => {
    expect(JSON.parse(readFileSync(join(dir, 'platform.json'), 'utf8'))).toEqual({ framework: 'function', runtime: 'python' });
    expect(readFileSync(join(dir, 'main.py'), 'utf8')).toMatch(/def handle\(event\)/);
  });

  it('deploys a directory, waits for ready and prints the public URL', async () => {
    writeFileSync(join(dir, '.platformignore'), 'secret.txt\n');
    writeFileSync(join(dir, 'secret.txt'), 'do not upload');
    const r = await sb.run(['deploy', dir]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/greeter is ready \(revision greeter-00001\)/);
    expect(r.stdout).toMatch(/url: +http:\/\/greeter-[a-z0-9]{6}\.apps\.localhost:\d+/);
    expect(r.stdout).toMatch(/invoke: platform invoke greeter -m "hello"/);
    expect(r.stderr).toMatch(/greeter: (building|deploying)/);
    const files = await sb.run(['agents', 'files', 'list', 'greeter', '--json']);
    expect(files.json.files.map((f: any) => f.path).sort()).toEqual(['.platformignore', 'main.py', 'platform.json']);
  });

  it('invokes, with --json and --stream', async () => {
    const r = await sb.run(['invoke', 'greeter', '-m', 'cli', '--json']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.json).toMatchObject({ reply: 'hello cli', user_id: 'admin@example.test' });
    const s = await sb.run(['invoke', 'greeter', '-m', 'streamed', '--stream']);
    expect(JSON.parse(s.stdout.trim()).reply).toBe('hello streamed');
    const status = await sb.run(['status', '--once']);
    expect(status.stdout).toMatch(/greeter +ready +greeter-00001 +http:\/\/greeter-/);
  });

  it('lists, gets, shows logs and revisions, edits env and secrets', async () => {
    const list = await sb.run(['agents', 'list']);
    expect(list.stdout).toMatch(/^NAME +STATE +FRAMEWORK/m);
    expect(list.stdout).toMatch(/greeter +ready +function/);
    const get = await sb.run(['agents', 'get', 'greeter', '--json']);
    expect(get.json).toMatchObject({ name: 'greeter', state: 'ready', ready: true, runtime: 'python' });
    const hist = await sb.run(['logs', 'greeter', '--history']);
    expect(hist.stdout).toMatch(/stdout: greeting cli/);
    const live = await sb.run(['logs', 'greeter']);
    expect(live.exitCode).toBe(0);
    expect(live.stdout).toMatch(/greeting|scaled to zero/);
    expect((await sb.run(['agents', 'env', 'set', 'greeter', 'GREETING=hi', 'X=a=b'])).exitCode).toBe(0);
    const env = await sb.run(['agents', 'env', 'get', 'greeter', '--json']);
    expect(env.json.env).toEqual({ GREETING: 'hi', X: 'a=b' });
    const refused = await sb.run(['agents', 'env', 'set', 'greeter', 'PATH=/x']);
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toMatch(/PATH \(reserved\)/);
    expect((await sb.run(['agents', 'secrets', 'set', 'greeter', 'TOKEN=abc'])).exitCode).toBe(0);
    const secrets = await sb.run(['agents', 'secrets', 'list', 'greeter']);
    expect(secrets.stdout).toMatch(/TOKEN/);
    expect(secrets.stdout).not.toMatch(/abc/);
    expect((await sb.run(['agents', 'secrets', 'unset', 'greeter', 'TOKEN'])).exitCode).toBe(0);
    expect((await sb.run(['agents', 'env', 'unset', 'greeter', 'X'])).exitCode).toBe(0);
    const revs = await sb.run(['agents', 'revisions', 'greeter', '--json']);
    expect(revs.json.revisions.map((r: any) => r.reason)).toEqual(['env', 'secrets', 'secrets', 'env', 'deploy']);
  });

  it('edits a file and redeploys from stored source', async () => {
    const local = join(work, 'main.py');
    writeFileSync(local, readFileSync(join(dir, 'main.py'), 'utf8').replace('hello {name}', 'howdy {name}'));
    expect((await sb.run(['agents', 'files', 'put', 'greeter', 'main.py', local])).exitCode).toBe(0);
    const got = await sb.run(['agents', 'files', 'get', 'greeter', 'main.py']);
    expect(got.stdout).toMatch(/howdy/);
    const re = await sb.run(['agents', 'redeploy', 'greeter']);
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
    const j = await sb.run(['deploy', bad, '--name', 'bad-agent', '--json']);
    expect(j.json.error).toMatch(/failed to deploy/);
  });

  it('deletes', async () => {
    const r = await sb.run(['agents', 'delete', 'greeter', '--json']);
    expect(r.json).toMatchObject({ deleted: true, agent: { name: 'greeter' } });
    const gone = await sb.run(['agents', 'get', 'greeter']);
    expect(gone.exitCode).toBe(1);
    expect(gone.stderr).toMatch(/unknown agent greeter/);
  });
});
