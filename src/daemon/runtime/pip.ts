/** Where requirements.txt installs from (the daemon's PLATFORM_PIP_FIND_LINKS). */
export interface PipSource {
  findLinks?: string;
}

/**
 * pip's arguments for `install -r requirements.txt` into the given interpreter. With a wheel
 * folder it never asks an index. Otherwise one retry with a short timeout: an unreachable index
 * then fails in seconds (pip's defaults wait 15 s a try, five retries), and the retry's warning
 * is what names the network error (with no retry pip reports only "no matching distribution").
 */
export function pipInstallArgs(python: string, requirements: string, source: PipSource = {}): string[] {
  const base = ['-m', 'pip', '--python', python, 'install', '--disable-pip-version-check', '--no-input'];
  if (source.findLinks) return [...base, '--no-index', '--find-links', source.findLinks, '-r', requirements];
  return [...base, ...PIP_FAST_FAIL.split(' '), '-r', requirements];
}

export const PIP_FAST_FAIL = '--timeout 5 --retries 1';

const NETWORK_ERROR =
  /NewConnectionError|Failed to establish a new connection|Name or service not known|Temporary failure in name resolution|Network is unreachable|Connection refused|ConnectTimeoutError|Read timed out|ProxyError|No route to host/;

/** When pip failed because the package index could not be reached: says so and how to build offline. */
export function pipIndexUnreachable(output: string, source: PipSource = {}): string | undefined {
  if (source.findLinks || !NETWORK_ERROR.test(output)) return undefined;
  const missing = /No matching distribution found for (\S+)/.exec(output)?.[1];
  return (
    `pip could not reach the package index${missing ? ` to install ${missing}` : ''}. ` +
    'To build without a network, put the wheels in a folder and start the daemon with PLATFORM_PIP_FIND_LINKS=/path/to/wheels ' +
    '(pip then installs with --find-links DIR --no-index; fill the folder on a machine that is online with `pip download -r requirements.txt -d DIR`), ' +
    'or vendor the packages beside your code'
  );
}
