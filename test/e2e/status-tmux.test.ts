import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliSandbox } from '../helpers/cli.js';

/**
 * `platform status` in a real terminal: tmux runs the CLI against the daemon it spawns, the test
 * sends keys and asserts on the captured pane, as a user would see it (docs/decisions/status.md).
 */
const ROOT = join(import.meta.dirname, '..', '..');
const sb = cliSandbox();
const work = mkdtempSync(join(tmpdir(), 'platform-status-e2e-'));
// A private tmux server: the test never sees (or kills) anyone else's sessions.
const SOCKET = `platform-status-e2e-${process.pid}`;

const tmux = (...args: string[]) => execFileSync('tmux', ['-L', SOCKET, ...args], { encoding: 'utf8' });
const pane = () => tmux('capture-pane', '-p', '-t', 'status');
const keys = (...k: string[]) => void tmux('send-keys', '-t', 'status', ...k);

/** Polls the pane until `ok` holds; fails with what the pane showed. */
async function until(ok: (screen: string) => boolean, what: string, ms = 20_000): Promise<string> {
  const end = Date.now() + ms;
  let screen = '';
  while (Date.now() < end) {
    screen = pane();
    if (ok(screen)) return screen;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}; the pane shows:\n${screen}`);
}
const shows = (text: string | RegExp) => (s: string) => (typeof text === 'string' ? s.includes(text) : text.test(s));

/** Starts `platform status` in a 100x30 terminal; after it exits the shell prints its exit code. */
function startStatus(args: string[], env: Record<string, string>): void {
  try {
    tmux('kill-session', '-t', 'status');
  } catch {
    // none left by an earlier test
  }
  const vars = Object.entries({ ...sb.env, ...env, PS1: 'prompt$ ' }).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
  // CI=true (as the test runner sets) means no terminal to the CLI, as to ink: a user's terminal has none.
  const cmd = `env -u CI -u CONTINUOUS_INTEGRATION node bin/run.js status ${args.join(' ')}; echo "status exited $?"; exec sh`;
  tmux('new-session', '-d', '-s', 'status', '-x', '100', '-y', '30', '-c', ROOT, ...vars, 'sh', '-c', cmd);
}

beforeAll(async () => {
  const dir = join(work, 'hello');
  expect((await sb.run(['init', dir, '--template', 'function-python'])).exitCode).toBe(0);
  const deploy = await sb.run(['deploy', dir]);
  expect(deploy.exitCode, deploy.stderr).toBe(0);
  for (const args of [['topics', 'create', 'orders', '--json'], ['subscriptions', 'create', 'orders', 'workers', '--json']]) {
    const r = await sb.run(args);
    expect(r.exitCode, r.stderr).toBe(0);
  }
  const published = await Promise.all(['one', 'two'].map((t) => sb.run(['publish', 'orders', '--text', t])));
  for (const p of published) expect(p.exitCode, p.stderr).toBe(0);
}, 120_000);

afterAll(async () => {
  try {
    tmux('kill-server');
  } catch {
    // already gone
  }
  await sb.stop();
  rmSync(work, { recursive: true, force: true });
});

describe('platform status in a terminal (tmux)', { timeout: 60_000 }, () => {
  it('navigates, opens details and logs, filters, runs a confirmed action, follows changes and quits restoring the terminal', async () => {
    startStatus([], { NO_COLOR: '' });
    let screen = await until(shows(/hello +ready +function hello-00001 http:\/\/hello-/), 'the first frame with the function');
    expect(screen.split('\n')[0]).toMatch(/^platform status · project default · http:\/\/127\.0\.0\.1:\d+ · up \S+ · isolation \S+/);
    expect(screen).toMatch(/>1 agents\/functions +1/);
    expect(screen).toMatch(/6 topics\/subs +2/);
    expect(screen).toMatch(/9 daemon\/sandbox +4/);
    // The alternate screen is on while the dashboard runs.
    expect(tmux('display', '-p', '-t', 'status', '#{alternate_on}').trim()).toBe('1');

    // tab walks the panes; j moves within one.
    keys('Tab');
    await until(shows('services (0)'), 'the services pane');
    for (let i = 0; i < 4; i++) keys('Tab');
    await until(shows('topics/subs (2)'), 'the topics pane');
    keys('j');
    screen = await until(shows(/> orders\/workers +ready +backlog 2 /), 'the subscription selected with its backlog');

    // An action asks first; y purges through the API and the live refresh shows the empty backlog.
    keys('x');
    await until(shows('purge subscription orders/workers (acknowledge every waiting message)? [y/N]'), 'the confirmation line');
    keys('y');
    await until(shows('orders/workers: 2 messages acknowledged and gone'), 'the purge result');
    await until(shows(/orders\/workers +ready +backlog 0 /), 'the backlog at 0 after a refresh');

    // Live: a topic created elsewhere appears without a key press.
    expect((await sb.run(['topics', 'create', 'audit'])).exitCode).toBe(0);
    await until(shows(/ audit +\S+ +topic 0 subs/), "the new topic");

    // Details of the function: its revisions.
    keys('1');
    await until(shows('agents/functions (1)'), 'the workloads pane');
    keys('Enter');
    screen = await until(shows('revisions (newest first):'), 'the details');
    expect(screen).toContain('details: agents/functions hello');
    expect(screen).toMatch(/hello-00001 +ready +100%/);
    keys('Escape');
    await until(shows('agents/functions (1)'), 'back from details');

    // Logs: an invoke made elsewhere shows up live.
    keys('l');
    await until(shows('logs: function hello'), 'the logs view');
    expect((await sb.run(['invoke', 'hello', '-m', 'from-tmux'])).exitCode).toBe(0);
    await until(shows('greeting from-tmux'), 'the live log line');
    keys('q');
    await until(shows('agents/functions (1)'), 'q leaves the logs for the dashboard');

    // Filter by name; Escape clears it.
    keys('/');
    await until(shows('(enter keeps, esc clears)'), 'the filter prompt');
    keys('z', 'z');
    await until(shows('no row matches the filter'), 'the filtered pane');
    keys('Escape');
    await until(shows(/hello +ready/), 'all rows again');

    // The key list.
    keys('?');
    await until(shows('move between rows'), 'the key list');
    keys('Escape');
    await until(shows('agents/functions (1)'), 'the dashboard again');

    keys('q');
    screen = await until(shows(/^status exited 0\nprompt\$/m), 'the process to exit and the shell prompt');
    // The shell's screen is back: no dashboard left on it, alternate screen off, cursor shown.
    expect(screen).not.toContain('platform status ·');
    expect(tmux('display', '-p', '-t', 'status', '#{alternate_on} #{cursor_flag}').trim()).toBe('0 1');
    tmux('kill-session', '-t', 'status');
  });

  it('a service that cannot start shows why; z scales it to zero through the API after a y', async () => {
    const created = await sb.run(['services', 'create', 'web', '--image', 'platform-none:local', '--min-scale', '1']);
    expect(created.exitCode, created.stderr).toBe(0);
    startStatus([], { NO_COLOR: '' });
    await until(shows(/hello +ready/), 'the first frame');
    keys('2');
    // Its real state and the reason, not a URL that answers nothing.
    await until(shows(/> web +not_ready +revision web-00001 is not ready/), 'the failing service with its reason');
    keys('z');
    await until(shows('let service web scale to zero (min_scale 0)? [y/N]'), 'the confirmation line');
    keys('n');
    await until(shows('scale to zero: cancelled'), 'the cancelled action');
    expect((await sb.run(['services', 'get', 'web', '--json'])).json.scaling.min_scale).toBe(1);
    keys('z');
    await until(shows('[y/N]'), 'the confirmation line again');
    keys('y');
    await until(shows('web: min_scale 0 (was 1)'), 'the result');
    expect((await sb.run(['services', 'get', 'web', '--json'])).json.scaling.min_scale).toBe(0);
    keys('q');
    await until(shows('status exited 0'), 'the process to exit');
    tmux('kill-session', '-t', 'status');
  });

  it('--no-color draws without colour escape codes; colour is on by default', async () => {
    startStatus(['--no-color'], { NO_COLOR: '' });
    await until(shows(/hello +ready/), 'the first frame');
    const raw = tmux('capture-pane', '-p', '-e', '-t', 'status');
    // capture-pane -e writes the cells' attributes as SGR sequences: none means plain text.
    expect(raw).not.toMatch(/\x1b\[[0-9;]*m/);
    keys('q');
    await until(shows('status exited 0'), 'the process to exit');
    tmux('kill-session', '-t', 'status');

    startStatus([], { NO_COLOR: '' });
    await until(shows(/hello +ready/), 'the first frame');
    expect(tmux('capture-pane', '-p', '-e', '-t', 'status')).toMatch(/\x1b\[[0-9;]*3[0-9][;m]/);
    keys('C-c');
    await until(shows('status exited 0'), 'ctrl-c to quit');
    expect(tmux('display', '-p', '-t', 'status', '#{alternate_on} #{cursor_flag}').trim()).toBe('0 1');
    tmux('kill-session', '-t', 'status');
  });

  it('without a terminal prints one plain table and exits 0; --json is the whole snapshot', async () => {
    const [plain, json] = await Promise.all([sb.run(['status'], { env: { CI: '0' } }), sb.run(['status', '-p', 'default', '--json'])]);
    expect(plain.exitCode, plain.stderr).toBe(0);
    const lines = plain.stdout.split('\n');
    expect(lines[0]).toMatch(/^project default · http:\/\/127\.0\.0\.1:\d+ · updated \d\d:\d\d:\d\d$/);
    expect(lines[1]).toMatch(/^KIND +NAME +STATE +DETAIL$/);
    expect(plain.stdout).toMatch(/^workloads +hello +ready +function hello-00001 http:\/\/hello-/m);
    expect(plain.stdout).toMatch(/^services +web +not_ready +revision web-00001 is not ready.*\(web-00001 min 0 max 10 http:\/\/web-/m);
    expect(plain.stdout).toMatch(/^messaging +orders\/workers +ready +backlog \d+ unacked \d+ pull/m);
    expect(plain.stdout).toMatch(/^daemon +isolation +\S+/m);
    expect(plain.stdout).not.toMatch(/\x1b\[/);
    expect(json.exitCode, json.stderr).toBe(0);
    expect(json.json.project).toBe('default');
    expect(json.json.panes.map((p: { id: string }) => p.id)).toEqual(['workloads', 'services', 'mcp', 'triggers', 'gateway', 'messaging', 'indexes', 'caches', 'daemon']);
    expect(json.json.panes[0].rows[0]).toMatchObject({ name: 'hello', state: 'ready', health: 'ok' });
  });
});
