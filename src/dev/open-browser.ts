import { spawn } from 'node:child_process';

/**
 * Opens an address the way a terminal user expects: $BROWSER when set (a command, given the
 * address as its argument), else xdg-open (macOS: open). Resolves to the command used, or
 * undefined when none could start, so the caller prints the address instead.
 */
export function openInBrowser(url: string): Promise<string | undefined> {
  const command = process.env.BROWSER?.split(':')[0] || (process.platform === 'darwin' ? 'open' : 'xdg-open');
  return new Promise((resolve) => {
    try {
      const child = spawn(command, [url], { stdio: 'ignore', detached: true });
      child.once('error', () => resolve(undefined));
      child.once('spawn', () => {
        child.unref();
        resolve(command);
      });
    } catch {
      resolve(undefined);
    }
  });
}
