import { spawn } from 'node:child_process';

/**
 * Opens an address in the person's browser when there is one to open: $BROWSER when set (the
 * first of a colon-separated list, given the address as its argument), else the platform's
 * opener when a display is present (macOS always). Resolves to the command used, or undefined
 * when none could start, so the caller prints the address instead; it never fails the command.
 */
export function openInBrowser(url: string): Promise<string | undefined> {
  const command =
    process.env.BROWSER?.split(':')[0] ||
    (process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? undefined : process.env.DISPLAY || process.env.WAYLAND_DISPLAY ? 'xdg-open' : undefined);
  if (!command) return Promise.resolve(undefined);
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
