import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');

/** Whether tmux runs here: terminal tests skip, and say so, without it. */
export const hasTmux = (() => {
  try {
    execFileSync('tmux', ['-V']);
    return true;
  } catch {
    return false;
  }
})();

/**
 * A real terminal for CLI tests: a private tmux server (its own socket, so a test never sees or
 * kills anyone else's sessions) running one CLI command in a fixed-size window. The test sends
 * keys and polls what the pane shows, as a user would read it.
 */
export function tmuxTerminal(name: string) {
  const socket = `${name}-${process.pid}`;
  const tmux = (...args: string[]) => execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });
  const pane = () => tmux('capture-pane', '-p', '-t', 'cli');
  const kill = () => {
    try {
      tmux('kill-session', '-t', 'cli');
    } catch {
      // none running
    }
  };
  return {
    tmux,
    pane,
    /** The pane with its cells' attributes as SGR sequences (capture-pane -e). */
    rawPane: () => tmux('capture-pane', '-p', '-e', '-t', 'cli'),
    keys: (...k: string[]) => void tmux('send-keys', '-t', 'cli', ...k),
    /** `#{alternate_on} #{cursor_flag}`: "0 1" once a full-screen program gave the terminal back. */
    screenState: () => tmux('display', '-p', '-t', 'cli', '#{alternate_on} #{cursor_flag}').trim(),
    /**
     * Runs `node bin/run.js ARGS` in a COLUMNSxROWS window; after it exits the shell prints
     * "exited <code>" and a "prompt$" prompt. CI is unset: to the CLI, as to ink, CI=true means no terminal.
     */
    start(args: string[], env: Record<string, string>, size: { columns: number; rows: number } = { columns: 100, rows: 30 }) {
      kill();
      const vars = Object.entries({ ...env, PS1: 'prompt$ ' }).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
      const cmd = `env -u CI -u CONTINUOUS_INTEGRATION node bin/run.js ${args.join(' ')}; echo "exited $?"; exec sh`;
      tmux('new-session', '-d', '-s', 'cli', '-x', String(size.columns), '-y', String(size.rows), '-c', ROOT, ...vars, 'sh', '-c', cmd);
    },
    /** Polls the pane until `ok` holds (never a fixed sleep); fails with what the pane showed. */
    async until(ok: string | RegExp | ((screen: string) => boolean), what: string, ms = 20_000): Promise<string> {
      const test = typeof ok === 'function' ? ok : (s: string) => (typeof ok === 'string' ? s.includes(ok) : ok.test(s));
      const end = Date.now() + ms;
      let screen = '';
      while (Date.now() < end) {
        screen = pane();
        if (test(screen)) return screen;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`timed out waiting for ${what}; the pane shows:\n${screen}`);
    },
    kill,
    close() {
      try {
        tmux('kill-server');
      } catch {
        // already gone
      }
    },
  };
}
