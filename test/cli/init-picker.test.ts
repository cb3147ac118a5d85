import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hasTmux } from '../helpers/tmux.js';
import { cliSandbox } from '../helpers/cli.js';

/**
 * `platform init` alone: the picker in a real terminal (tmux: keys sent, the pane read as a user
 * sees it), and without a terminal a usage error that names what to pass.
 */
const BIN = join(import.meta.dirname, '..', '..', 'bin', 'run.js');
const cli = cliSandbox();
const SOCKET = `init-picker-${process.pid}`;
const tmux = (...args: string[]) => execFileSync('tmux', ['-L', SOCKET, ...args], { encoding: 'utf8' });
afterAll(async () => {
  try {
    tmux('kill-server');
  } catch {
    // no server left
  }
  await cli.stop();
});

if (!hasTmux) console.warn('SKIPPED: init picker in a terminal: tmux is not installed');

/** Polls the pane until `pattern` shows (the screen is the only signal a terminal gives). */
async function waitForPane(session: string, pattern: RegExp, timeoutMs = 60_000): Promise<string> {
  const end = Date.now() + timeoutMs;
  let pane = '';
  while (Date.now() < end) {
    pane = tmux('capture-pane', '-p', '-t', session);
    if (pattern.test(pane)) return pane;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`pane never showed ${pattern}:\n${pane}`);
}

/** Starts `platform init` in its own tmux session, in a fresh folder; returns the folder. */
function startInit(session: string): string {
  const cwd = mkdtempSync(join(tmpdir(), 'init-picker-'));
  const env = Object.entries(cli.env)
    .map(([k, v]) => `${k}='${v}'`)
    .join(' ');
  tmux('new-session', '-d', '-s', session, '-x', '100', '-y', '24', '-c', cwd, `env -u CI -u CONTINUOUS_INTEGRATION ${env} node '${BIN}' init; echo "EXIT=$?"; sleep 60`);
  return cwd;
}

describe('platform init with no arguments', () => {
  it.skipIf(!hasTmux)('on a terminal: a picker; arrows and Enter choose, and the folder is created from that template', { timeout: 180_000 }, async () => {
    const cwd = startInit('pick');
    await waitForPane('pick', /Name \(the folder/);
    tmux('send-keys', '-t', 'pick', 'my-agent');
    await waitForPane('pick', /deploys as\): my-agent/);
    tmux('send-keys', '-t', 'pick', 'Enter');
    await waitForPane('pick', /❯ Function/);
    tmux('send-keys', '-t', 'pick', 'Down');
    await waitForPane('pick', /❯ Agent/);
    tmux('send-keys', '-t', 'pick', 'Enter');
    await waitForPane('pick', /Framework\n❯ LangGraph/);
    tmux('send-keys', '-t', 'pick', 'Down');
    tmux('send-keys', '-t', 'pick', 'Down');
    await waitForPane('pick', /❯ CrewAI/);
    tmux('send-keys', '-t', 'pick', 'Enter');
    const pane = await waitForPane('pick', /EXIT=\d+/);
    expect(pane).toMatch(/created agent-crewai in my-agent: \.gitignore, README\.md, crew\.py, platform\.json, requirements\.txt/);
    expect(pane).toMatch(/next: platform deploy my-agent/);
    expect(pane).toMatch(/EXIT=0/);
    expect(readdirSync(join(cwd, 'my-agent')).sort()).toEqual(['.gitignore', 'README.md', 'crew.py', 'platform.json', 'requirements.txt']);
    expect(readFileSync(join(cwd, 'my-agent', 'platform.json'), 'utf8')).toMatch(/"framework": "crewai"/);
    rmSync(cwd, { recursive: true, force: true });
  });

  it.skipIf(!hasTmux)('on a terminal: a name that cannot deploy is refused there, and Esc leaves without creating anything', { timeout: 180_000 }, async () => {
    const cwd = startInit('cancel');
    await waitForPane('cancel', /Name \(the folder/);
    tmux('send-keys', '-t', 'cancel', 'Bad_Name');
    await waitForPane('cancel', /Bad_Name/);
    tmux('send-keys', '-t', 'cancel', 'Enter');
    await waitForPane('cancel', /use lowercase letters, digits and hyphens/);
    tmux('send-keys', '-t', 'cancel', 'Escape');
    const pane = await waitForPane('cancel', /EXIT=\d+/);
    expect(pane).toMatch(/Error: init cancelled: nothing was created/);
    expect(pane).toMatch(/EXIT=1/);
    expect(readdirSync(cwd)).toEqual([]);
    rmSync(cwd, { recursive: true, force: true });
  });

  it('without a terminal: a usage error naming DIR and --template, in JSON under --json', { timeout: 120_000 }, async () => {
    const r = await cli.run(['init']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/Error: init needs a folder and a template when it cannot ask/);
    expect(r.stderr).toMatch(/next: pass DIR --template TEMPLATE, e\.g\. `platform init hello --template function-python` \(templates: function-python, .*mcp-python\)/);
    const json = await cli.run(['init', '--json']);
    expect(json.exitCode).toBe(2);
    expect(json.json).toMatchObject({ error: expect.stringMatching(/^init needs a folder and a template/), next: expect.stringMatching(/--template/) });
    expect(existsSync(join(process.cwd(), 'platform.json'))).toBe(false);
  });

  it('a folder without --template and without a terminal still gets function-python', { timeout: 120_000 }, async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'init-dir-')), 'fn');
    const r = await cli.run(['init', dir]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^created function-python in .*fn: \.gitignore, README\.md, main\.py, platform\.json$/m);
  });
});
