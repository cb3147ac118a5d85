import { readFileSync } from 'node:fs';
import { sandboxRoutes, type ExecuteBody, type ExecuteResult, type PoolStats } from '../api/sandbox.js';
import { ApiClient } from './api-client.js';
import { getContext } from './contexts.js';
import { AbortError, UsageError } from './errors.js';
import { findDaemon } from './local-daemon.js';
import { contextUrl } from './session.js';

/**
 * The CLI side of the code sandbox (spec 2 §4.6). The sandbox has no authentication and answers
 * only on the daemon's loopback sandbox listener: SANDBOX_URL when set (inside a workload), else
 * the local daemon's (started when needed). Nothing here knows oclif.
 */
export async function sandboxClient(contextName?: string): Promise<ApiClient> {
  const set = process.env.SANDBOX_URL;
  if (set) return new ApiClient(set.replace(/\/$/, ''));
  const context = getContext(contextName);
  if (context.kind === 'remote') {
    throw new AbortError('the code sandbox has no public address: it answers only on the machine of its daemon', 'run the command there, or set SANDBOX_URL');
  }
  await contextUrl(context);
  const info = await findDaemon();
  if (!info?.sandbox_url) throw new AbortError('the local daemon does not report a sandbox listener', 'restart it with `platform daemon stop` and `platform daemon start`');
  return new ApiClient(info.sandbox_url);
}

/** `--file PATH=LOCAL` pairs: the sandbox path and the local file whose bytes it gets. */
export function inputFiles(pairs: string[] | undefined): NonNullable<ExecuteBody['files']> {
  return (pairs ?? []).map((pair) => {
    const at = pair.indexOf('=');
    if (at <= 0 || at === pair.length - 1) throw new UsageError(`--file ${pair}: expected PATH=LOCAL`, 'for example --file data.csv=./local/data.csv');
    const local = pair.slice(at + 1);
    let bytes: Buffer;
    try {
      bytes = readFileSync(local);
    } catch (e) {
      throw new UsageError(`--file ${pair}: cannot read ${local}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
    return { path: pair.slice(0, at), content_b64: bytes.toString('base64') };
  });
}

/** The code of `sandbox exec`: -c CODE, or a FILE (`-` reads stdin); exactly one. */
export function execCode(code: string | undefined, file: string | undefined, stdin: () => string): string {
  if ((code === undefined) === (file === undefined)) throw new UsageError('give the code with -c CODE or as a FILE (not both)', 'for example: platform sandbox exec -c "print(1)"');
  if (code !== undefined) return code;
  if (file === '-') return stdin();
  try {
    return readFileSync(file!, 'utf8');
  } catch (e) {
    throw new UsageError(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

export function execute(client: ApiClient, body: ExecuteBody): Promise<ExecuteResult> {
  return client.call(sandboxRoutes.execute, { body });
}

export function poolStats(client: ApiClient): Promise<PoolStats> {
  return client.call(sandboxRoutes.pool);
}

/**
 * The process exit code for a sandbox result: the code's own, and 124 (as timeout(1)) when the
 * sandbox killed the run (exit_code -1: deadline or output limit).
 */
export const exitCodeOf = (r: ExecuteResult) => (r.exit_code === -1 ? 124 : r.exit_code & 0xff);
