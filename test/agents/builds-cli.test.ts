import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliSandbox } from '../helpers/cli.js';
import { HELLO_PY } from './helpers.js';

/**
 * The CLI side of builds: a folder without platform.json, build output while deploying, a failed
 * redeploy that keeps serving, `logs --build`, and secrets that never need the command line.
 */
const sb = cliSandbox({ PLATFORM_SCALE_TO_ZERO_SECONDS: '120' });
const work = mkdtempSync(join(tmpdir(), 'platform-builds-cli-'));
const plain = join(work, 'plain');
const hasPip = spawnSync('python3', ['-m', 'pip', '--version']).status === 0;
if (!hasPip) console.warn('SKIPPED: the failed redeploy through the CLI: python3 -m pip is not available');

const folder = (name: string, files: Record<string, string>) => {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  for (const [f, content] of Object.entries(files)) writeFileSync(join(dir, f), content);
  return dir;
};

beforeAll(() => {
  folder('plain', { 'main.py': HELLO_PY });
});
afterAll(async () => {
  await sb.stop();
  rmSync(work, { recursive: true, force: true });
});

describe('deploy without platform.json', { timeout: 120_000 }, () => {
  it('a folder holding a function handler deploys as that function, and says so; --verbose shows the build output', async () => {
    const r = await sb.run(['deploy', plain, '--verbose']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toContain('no platform.json: deploying as a python function (found main.py)');
    expect(r.stdout).toMatch(/plain is ready \(revision plain-00001\)/);
    // The build's own lines, live on stderr.
    expect(r.stderr).toMatch(/build [0-9a-f-]{36} for plain \(function\/python\) on the process driver\nsource: 1 files written to [0-9a-f-]{36}\n/);
    expect(r.stderr).toMatch(/build finished\n/);
    const get = await sb.run(['agents', 'get', 'plain', '--json']);
    expect(get.json).toMatchObject({ framework: 'function', runtime: 'python', state: 'ready' });
  });

  it('without --verbose the build output stays behind the progress lines', async () => {
    const quiet = folder('quiet', { 'index.js': 'exports.handle = async (event) => ({ reply: "js " + event.message });\n' });
    const r = await sb.run(['deploy', quiet]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toContain('no platform.json: deploying as a nodejs function (found index.js)');
    expect(r.stderr).toMatch(/quiet: (building|deploying)/);
    expect(r.stderr).not.toMatch(/build finished/);
  });

  it('a folder with nothing to go by is refused, naming what was looked for; an agent is never guessed', async () => {
    const readme = folder('mystery', { 'README.md': '# what am I\n' });
    const agentish = folder('agentish', { 'agent.py': 'root_agent = None\n' });
    const [a, b] = await Promise.all([sb.run(['deploy', readme]), sb.run(['deploy', agentish])]);
    for (const [r, dir] of [
      [a, readme],
      [b, agentish],
    ] as const) {
      expect(r.exitCode).toBe(1);
      expect(r.stderr).toContain(
        `cannot tell what ${dir} deploys as: it has no platform.json and no function handler at its top (looked for main.py (python), index.mjs, index.js or index.cjs (nodejs), a .go file (go), handler.rb (ruby))`,
      );
      expect(r.stderr).toMatch(/pass --framework adk\|langgraph\|crewai/);
    }
    // Nothing was uploaded.
    expect((await sb.run(['agents', 'get', 'agentish'])).exitCode).toBe(1);
  });

  it('handlers of two runtimes ask for --runtime', async () => {
    const both = folder('both', { 'main.py': HELLO_PY, 'handler.rb': 'def handle(event) = { reply: "rb" }\n' });
    const r = await sb.run(['deploy', both]);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/holds handlers of several runtimes \(main\.py for python, handler\.rb for ruby\)/);
    expect(r.stderr).toMatch(/pass --runtime python\|ruby/);
  });
});

describe.skipIf(!hasPip)('a failed redeploy through the CLI', { timeout: 120_000 }, () => {
  it('fails the command with the tail, while status and agents get read ready on the previous revision', async () => {
    writeFileSync(join(plain, 'requirements.txt'), 'surely-not-installed-pkg-xyz==1.0\n');
    const r = await sb.run(['deploy', plain]);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('plain: revision plain-00002 failed; plain-00001 keeps serving:');
    expect(r.stderr).toMatch(/revision plain-00002 failed to build \(plain-00001 keeps serving\): pip could not reach the package index/);
    expect(r.stderr).toMatch(/platform logs plain --build --revision plain-00002/);
    const [status, get, once, revs] = await Promise.all([
      sb.run(['status', '--json']),
      sb.run(['agents', 'get', 'plain', '--json']),
      sb.run(['status', '--once']),
      sb.run(['agents', 'revisions', 'plain']),
    ]);
    const row = status.json.panes.find((p: any) => p.id === 'workloads').rows.find((r: any) => r.name === 'plain');
    expect(row).toMatchObject({ state: 'ready', health: 'busy', summary: expect.stringContaining('plain-00001 http://plain-') });
    expect(row.error).toMatch(/^revision plain-00002 failed to build \(plain-00001 keeps serving\)/);
    expect(get.json).toMatchObject({ state: 'ready', ready: true, latest_revision: 'plain-00002', serving_revision: 'plain-00001' });
    expect(once.stdout).toMatch(/^workloads +plain +ready +revision plain-00002 failed to build \(plain-00001 keeps serving\).*\(function plain-00001 http:\/\/plain-/m);
    expect(revs.stdout).toMatch(/plain-00002 +failed +redeploy|plain-00002 +failed +deploy/);
    expect(revs.stdout).toMatch(/plain-00001 \* +ready +deploy/);
    // It still answers.
    expect((await sb.run(['invoke', 'plain', '-m', 'still', '--json'])).json.reply).toBe('hello still');
  });

  it('logs --build shows the newest build, --revision an older one', async () => {
    const [newest, first, json] = await Promise.all([
      sb.run(['logs', 'plain', '--build']),
      sb.run(['logs', 'plain', '--build', '--revision', '1']),
      sb.run(['logs', 'plain', '--build', '--revision', 'plain-00002', '--json']),
    ]);
    expect(newest.exitCode, newest.stderr).toBe(0);
    expect(newest.stdout).toMatch(/^build [0-9a-f-]{36} for plain/);
    expect(newest.stdout).toMatch(/\$ pip install -r requirements\.txt\n/);
    expect(newest.stdout).toMatch(/pip could not reach the package index/);
    expect(first.stdout).toMatch(/build finished\n?$/);
    expect(first.stdout).not.toMatch(/pip install/);
    // execa drops the printed log's last newline.
    expect(json.json).toEqual({ agent: 'plain', revision: 'plain-00002', output: `${newest.stdout}\n` });
    const missing = await sb.run(['logs', 'plain', '--build', '--revision', '42']);
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toMatch(/no revision 42 for agent plain/);
  });
});

describe('agents secrets set', { timeout: 120_000 }, () => {
  it('reads the value from stdin or --from-file without a warning, and warns when it is on the command line', async () => {
    const file = join(work, 'greeting.txt');
    writeFileSync(file, 'from a file');
    const piped = await sb.run(['agents', 'secrets', 'set', 'plain', 'API_TOKEN'], { input: 'from stdin\n' });
    expect(piped.exitCode, piped.stderr).toBe(0);
    expect(piped.stderr).not.toMatch(/warning/);
    const fromFile = await sb.run(['agents', 'secrets', 'set', 'plain', 'GREETING', '--from-file', file]);
    expect(fromFile.exitCode, fromFile.stderr).toBe(0);
    expect(fromFile.stderr).not.toMatch(/warning/);
    const inline = await sb.run(['agents', 'secrets', 'set', 'plain', 'MODEL_API_KEY=on-the-line']);
    expect(inline.exitCode, inline.stderr).toBe(0);
    expect(inline.stderr).toMatch(/^warning: a secret value given on the command line stays in your shell history/m);
    const env = await sb.run(['invoke', 'plain', '-m', 'env', '--json']);
    expect(env.json).toMatchObject({ API_TOKEN: 'from stdin', GREETING: 'from a file', MODEL_API_KEY: 'on-the-line' });
    // The names are listed, never the values.
    const list = await sb.run(['agents', 'secrets', 'list', 'plain', '--json']);
    expect(list.json.keys).toEqual(['API_TOKEN', 'GREETING', 'MODEL_API_KEY']);
    expect(list.stdout).not.toMatch(/from stdin|from a file/);
  });

  it('refuses an empty value and a missing name', async () => {
    const [empty, none] = await Promise.all([
      sb.run(['agents', 'secrets', 'set', 'plain', 'EMPTY'], { input: '' }),
      sb.run(['agents', 'secrets', 'set', 'plain', '--from-file', join(work, 'greeting.txt')]),
    ]);
    expect(empty.exitCode).toBe(2);
    expect(empty.stderr).toMatch(/the value of EMPTY is empty/);
    expect(none.exitCode).toBe(2);
    expect(none.stderr).toMatch(/--from-file needs the secret name/);
  });
});
