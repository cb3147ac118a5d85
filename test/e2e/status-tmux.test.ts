import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliSandbox } from '../helpers/cli.js';
import { tmuxTerminal } from '../helpers/tmux.js';

/**
 * `platform status` in a real terminal: tmux runs the CLI against the daemon it spawns, the test
 * sends keys and asserts on the captured pane, as a user would see it (docs/decisions/status.md).
 */
const sb = cliSandbox();
const work = mkdtempSync(join(tmpdir(), 'platform-status-e2e-'));
const term = tmuxTerminal('platform-status-e2e');
const { keys, until } = term;
const startStatus = (args: string[], env: Record<string, string>) => term.start(['status', ...args], { ...sb.env, ...env });

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
  term.close();
  await sb.stop();
  rmSync(work, { recursive: true, force: true });
});

describe('platform status in a terminal (tmux)', { timeout: 60_000 }, () => {
  it('navigates, opens details and logs, filters, runs a confirmed action, follows changes and quits restoring the terminal', async () => {
    startStatus([], { NO_COLOR: '' });
    let screen = await until(/hello +ready +function hello-00001 http:\/\/hello-/, 'the first frame with the function');
    expect(screen.split('\n')[0]).toMatch(/^platform status · project default · http:\/\/127\.0\.0\.1:\d+ · up \S+ · isolation \S+/);
    expect(screen).toMatch(/>1 agents\/functions +1/);
    expect(screen).toMatch(/6 topics\/subs +2/);
    expect(screen).toMatch(/9 daemon\/sandbox +4/);
    // The alternate screen is on while the dashboard runs.
    expect(term.tmux('display', '-p', '-t', 'cli', '#{alternate_on}').trim()).toBe('1');

    // tab walks the panes; j moves within one.
    keys('Tab');
    await until('services (0)', 'the services pane');
    for (let i = 0; i < 4; i++) keys('Tab');
    await until('topics/subs (2)', 'the topics pane');
    keys('j');
    screen = await until(/> orders\/workers +ready +backlog 2 /, 'the subscription selected with its backlog');

    // An action asks first; y purges through the API and the live refresh shows the empty backlog.
    keys('x');
    await until('purge subscription orders/workers (acknowledge every waiting message)? [y/N]', 'the confirmation line');
    keys('y');
    await until('orders/workers: 2 messages acknowledged and gone', 'the purge result');
    await until(/orders\/workers +ready +backlog 0 /, 'the backlog at 0 after a refresh');

    // Live: a topic created elsewhere appears without a key press.
    expect((await sb.run(['topics', 'create', 'audit'])).exitCode).toBe(0);
    await until(/ audit +\S+ +topic 0 subs/, "the new topic");

    // Details of the function: its revisions.
    keys('1');
    await until('agents/functions (1)', 'the workloads pane');
    keys('Enter');
    screen = await until('revisions (newest first):', 'the details');
    expect(screen).toContain('details: agents/functions hello');
    expect(screen).toMatch(/hello-00001 +ready +100%/);
    keys('Escape');
    await until('agents/functions (1)', 'back from details');

    // Logs: an invoke made elsewhere shows up live.
    keys('l');
    await until('logs: function hello', 'the logs view');
    expect((await sb.run(['invoke', 'hello', '-m', 'from-tmux'])).exitCode).toBe(0);
    await until('greeting from-tmux', 'the live log line');
    keys('q');
    await until('agents/functions (1)', 'q leaves the logs for the dashboard');

    // Filter by name; Escape clears it.
    keys('/');
    await until('(enter keeps, esc clears)', 'the filter prompt');
    keys('z', 'z');
    await until('no row matches the filter', 'the filtered pane');
    keys('Escape');
    await until(/hello +ready/, 'all rows again');

    // The key list.
    keys('?');
    await until('move between rows', 'the key list');
    keys('Escape');
    await until('agents/functions (1)', 'the dashboard again');

    keys('q');
    screen = await until(/^exited 0\nprompt\$/m, 'the process to exit and the shell prompt');
    // The shell's screen is back: no dashboard left on it, alternate screen off, cursor shown.
    expect(screen).not.toContain('platform status ·');
    expect(term.screenState()).toBe('0 1');
    term.kill();
  });

  it('--no-color draws without colour escape codes; colour is on by default', async () => {
    startStatus(['--no-color'], { NO_COLOR: '' });
    await until(/hello +ready/, 'the first frame');
    const raw = term.rawPane();
    // capture-pane -e writes the cells' attributes as SGR sequences: none means plain text.
    expect(raw).not.toMatch(/\x1b\[[0-9;]*m/);
    keys('q');
    await until('exited 0', 'the process to exit');
    term.kill();

    startStatus([], { NO_COLOR: '' });
    await until(/hello +ready/, 'the first frame');
    expect(term.rawPane()).toMatch(/\x1b\[[0-9;]*3[0-9][;m]/);
    keys('C-c');
    await until('exited 0', 'ctrl-c to quit');
    expect(term.screenState()).toBe('0 1');
    term.kill();
  });

  it('without a terminal prints one plain table and exits 0; --json is the whole snapshot', async () => {
    const [plain, json] = await Promise.all([sb.run(['status'], { env: { CI: '0' } }), sb.run(['status', '-p', 'default', '--json'])]);
    expect(plain.exitCode, plain.stderr).toBe(0);
    const lines = plain.stdout.split('\n');
    expect(lines[0]).toMatch(/^project default · http:\/\/127\.0\.0\.1:\d+ · updated \d\d:\d\d:\d\d$/);
    expect(lines[1]).toMatch(/^KIND +NAME +STATE +DETAIL$/);
    expect(plain.stdout).toMatch(/^workloads +hello +ready +function hello-00001 http:\/\/hello-/m);
    expect(plain.stdout).toMatch(/^services +- +none/m);
    expect(plain.stdout).toMatch(/^messaging +orders\/workers +ready +backlog \d+ unacked \d+ pull/m);
    expect(plain.stdout).toMatch(/^daemon +isolation +\S+/m);
    expect(plain.stdout).not.toMatch(/\x1b\[/);
    expect(json.exitCode, json.stderr).toBe(0);
    expect(json.json.project).toBe('default');
    expect(json.json.panes.map((p: { id: string }) => p.id)).toEqual(['workloads', 'services', 'mcp', 'triggers', 'gateway', 'messaging', 'indexes', 'caches', 'daemon']);
    expect(json.json.panes[0].rows[0]).toMatchObject({ name: 'hello', state: 'ready', health: 'ok' });
  });
});
