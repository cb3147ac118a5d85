import { execa } from 'execa';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliSandbox } from '../helpers/cli.js';
import { hasTmux, tmuxTerminal } from '../helpers/tmux.js';

/**
 * The zsh and fish scripts of `platform completion`, run by the real shells against a real daemon
 * with deployed agents and a topic: fish through `complete -C` (fish's own way to ask what a TAB
 * would offer), zsh interactively under tmux (compinit, the sourced script, TAB, the pane read).
 */
const installed = (shell: string) => {
  try {
    execFileSync(shell, ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};
const hasFish = installed('fish');
const hasZsh = installed('zsh') && hasTmux;
if (!hasFish) console.warn('SKIPPED: fish completion: fish is not installed');
if (!hasZsh) console.warn('SKIPPED: zsh completion: zsh or tmux is not installed');

// A first look-up loads the session code and asks the daemon: more than the 900 ms budget on a
// loaded test machine (see completion.test.ts).
const cli = cliSandbox({ PLATFORM_COMPLETION_BUDGET_MS: '15000' });
const BIN = join(import.meta.dirname, '..', '..', 'bin', 'run.js');
const dir = mkdtempSync(join(tmpdir(), 'completion-shells-'));
afterAll(async () => {
  await cli.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** `platform` on the PATH as a user would have it, and each shell's script saved from the CLI. */
const shellEnv = () => ({
  ...cli.env,
  PATH: `${join(dir, 'bin')}:${process.env.PATH}`,
  // Neither shell reads or writes the user's own configuration.
  XDG_CONFIG_HOME: join(dir, 'config'),
  XDG_DATA_HOME: join(dir, 'data'),
  HOME: dir,
});

beforeAll(async () => {
  mkdirSync(join(dir, 'bin'));
  writeFileSync(join(dir, 'bin', 'platform'), `#!/bin/sh\nexec node ${JSON.stringify(BIN)} "$@"\n`);
  chmodSync(join(dir, 'bin', 'platform'), 0o755);
  for (const name of ['hello', 'helper']) {
    const source = join(dir, 'agents', name);
    expect((await cli.run(['init', source, '--template', 'function-python'])).exitCode).toBe(0);
    const deployed = await cli.run(['deploy', source, '--name', name, '--no-wait']);
    expect(deployed.exitCode, deployed.stderr).toBe(0);
  }
  expect((await cli.run(['topics', 'create', 'orders'])).exitCode).toBe(0);
  expect((await cli.run(['subscriptions', 'create', 'orders', 'billing'])).exitCode).toBe(0);
  for (const shell of ['zsh', 'fish']) {
    const script = await cli.run(['completion', shell]);
    expect(script.exitCode, script.stderr).toBe(0);
    writeFileSync(join(dir, `platform.${shell}`), script.stdout);
  }
}, 120_000);

describe.skipIf(!hasFish)('fish: complete -C with the generated script', () => {
  /** What fish would offer for each command line: one list of `value<TAB>description` per line. */
  async function fishComplete(...lines: string[]): Promise<string[][]> {
    const runner = join(dir, 'ask.fish');
    writeFileSync(runner, `source ${join(dir, 'platform.fish')}\nfor line in $argv\n    complete -C $line\n    echo '<<end>>'\nend\n`);
    const r = await execa('fish', ['--no-config', runner, ...lines], { env: shellEnv(), reject: false, timeout: 90_000 });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    return r.stdout
      .split('<<end>>')
      .slice(0, lines.length)
      .map((block) => block.split('\n').filter(Boolean));
  }
  const values = (offered: string[]) => offered.map((l) => l.split('\t')[0]);

  it('offers the deployed names, the flags, a flag\'s fixed values and subcommands', async () => {
    const [names, flags, sizes, quoted, sub, subscriptions, joined] = await fishComplete(
      'platform agents get ',
      'platform agents get --',
      'platform agents config hello --size ',
      "platform agents get 'hel",
      'platform agents ge',
      'platform pull orders/',
      'platform agents config hello --size=m',
    );
    expect(values(names)).toEqual(['hello', 'helper']);
    expect(values(flags)).toEqual(expect.arrayContaining(['--project', '--context', '--json', '--help']));
    // fish shows each flag's description next to it.
    expect(flags).toContain('--json\tFormat output as json.');
    // fish sorts the candidates itself.
    expect(values(sizes).sort()).toEqual(['large', 'medium', 'small', 'xlarge']);
    // A word opened with a quote is completed as the word inside it.
    expect(values(quoted)).toEqual(['hello', 'helper']);
    expect(sub).toEqual(['get\tShow one agent or function']);
    expect(values(subscriptions)).toEqual(['orders/billing']);
    // --flag=value is one word in fish: its candidates are whole words too.
    expect(values(joined)).toEqual(['--size=medium']);
  }, 90_000);
});

describe.skipIf(!hasZsh)('zsh: an interactive shell under tmux', () => {
  const term = tmuxTerminal('completion-zsh');
  afterAll(() => term.close());
  const PROMPT = 'zsh$ ';

  beforeAll(async () => {
    const zdot = join(dir, 'zdot');
    mkdirSync(zdot);
    // compinit as a user's ~/.zshrc runs it (-u: the test's files are not the user's own), then the
    // script as the completion help says: `source <(platform completion zsh)`.
    writeFileSync(
      join(zdot, '.zshrc'),
      [`autoload -Uz compinit && compinit -u -d ${join(zdot, 'zcompdump')}`, 'source <(platform completion zsh)', `PS1='${PROMPT}'`, ''].join('\n'),
    );
    // Through env(1): tmux gives a new session the PATH of the client that made it, not the -e one.
    const vars = Object.entries({ ...shellEnv(), ZDOTDIR: zdot }).map(([k, v]) => `${k}=${v}`);
    // -d: no /etc/zsh files, so only compinit and our script shape what a TAB does.
    term.tmux('new-session', '-d', '-s', 'cli', '-x', '120', '-y', '30', 'env', ...vars, 'zsh', '-d', '-i');
    await term.until((s) => s.trimEnd() === PROMPT.trimEnd(), 'the zsh prompt', 30_000);
  }, 60_000);

  /** Clears the line and the screen so each case reads a fresh pane. */
  async function freshLine() {
    term.keys('C-u', 'C-l');
    await term.until((s) => s.trimEnd() === PROMPT.trimEnd(), 'an empty prompt');
  }
  const line = (screen: string) => screen.split('\n')[0];

  it('agents get + TAB: the unambiguous part, then the deployed names', async () => {
    await freshLine();
    term.keys('platform agents get ', 'Tab');
    await term.until((s) => line(s) === `${PROMPT}platform agents get hel`, 'the common prefix of the names', 30_000);
    term.keys('Tab');
    const screen = await term.until(/^hello\s+helper\s*$/m, 'the two names listed', 30_000);
    expect(screen).not.toMatch(/error|command not found/);
  }, 90_000);

  it('a word opened with a quote is completed and closed', async () => {
    await freshLine();
    term.keys("platform agents get 'hell", 'Tab');
    await term.until((s) => line(s) === `${PROMPT}platform agents get 'hello'`, 'the quoted name completed', 30_000);
  }, 60_000);

  it('a subcommand, a flag and its fixed values', async () => {
    await freshLine();
    term.keys('platform agents ge', 'Tab');
    await term.until((s) => line(s) === `${PROMPT}platform agents get`, 'the subcommand completed', 30_000);
    await freshLine();
    term.keys('platform agents config hello --si', 'Tab');
    await term.until((s) => line(s) === `${PROMPT}platform agents config hello --size`, 'the flag completed', 30_000);
    term.keys('Tab');
    await term.until(/^large\s+medium\s+small\s+xlarge\s*$/m, 'the sizes listed', 30_000);
    await freshLine();
    term.keys('platform agents config hello --', 'Tab');
    const flags = await term.until(/^--size\s+-- instance size$/m, 'the flags listed with their descriptions', 30_000);
    expect(flags).toMatch(/^--json\s+-- Format output as json\.$/m);
    await freshLine();
    term.keys('platform agents config hello --size=me', 'Tab');
    await term.until((s) => line(s) === `${PROMPT}platform agents config hello --size=medium`, 'the value after = completed', 30_000);
  }, 120_000);

  it('TOPIC/ stays open (no space) so the next TAB offers the subscription', async () => {
    await freshLine();
    term.keys('platform pull ord', 'Tab');
    await term.until((s) => line(s) === `${PROMPT}platform pull orders/`, 'the topic with its slash', 30_000);
    term.keys('Tab');
    await term.until((s) => line(s) === `${PROMPT}platform pull orders/billing`, 'the subscription appended', 30_000);
  }, 90_000);
});
