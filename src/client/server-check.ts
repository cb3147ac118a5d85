import { readFileSync } from 'node:fs';
import { healthRoutes } from '../api/health.js';
import { ApiClient } from './api-client.js';
import { AbortError, ApiCallError, UsageError } from './errors.js';

/** Reads a CA certificate file for `--ca-cert`: PEM, one or more certificates. */
export function readCaCert(file: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new UsageError(`cannot read the CA certificate ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  if (!/-----BEGIN CERTIFICATE-----[\s\S]+-----END CERTIFICATE-----/.test(text)) {
    throw new UsageError(`${file} is not a PEM certificate`, 'pass the CA certificate in PEM form (-----BEGIN CERTIFICATE-----)');
  }
  return text;
}

/** The release line a version belongs to: the major, or `0.minor` before 1.0 (semver's rule for breaking changes). */
const line = (v: string) => {
  const [major, minor] = v.replace(/^v/, '').split('.');
  return major === '0' ? `0.${minor ?? '0'}` : (major ?? v);
};

export interface ServerCheck {
  version: string;
  /** Set when the server's release line differs from the CLI's. */
  warning?: string;
}

/**
 * What `context add` checks before saving: the server answers (the URL is right and reachable),
 * its TLS certificate is trusted (with the given CA), it is a platform (its /healthz names a
 * version), and that version is of the CLI's release line.
 */
export async function checkServer(url: string, ca: string | undefined, cliVersion: string): Promise<ServerCheck> {
  let health: { version?: unknown };
  try {
    health = (await new ApiClient(url, undefined, { ca }).call(healthRoutes.healthz)) as { version?: unknown };
  } catch (e) {
    // 503 is a degraded platform: still a platform, and its body says which version.
    if (e instanceof ApiCallError && e.status === 503 && typeof (e.body as { version?: unknown })?.version === 'string') health = e.body as { version: string };
    else if (e instanceof ApiCallError) throw new AbortError(`${url} answered GET /healthz with ${e.status}: it does not look like a platform server`, 'check the URL: it is the base address of the platform API');
    else throw e;
  }
  if (typeof health?.version !== 'string') {
    throw new AbortError(`${url}/healthz does not name a platform version: it does not look like a platform server`, 'check the URL: it is the base address of the platform API');
  }
  const version = health.version;
  if (line(version) === line(cliVersion)) return { version };
  return {
    version,
    warning: `the server runs platform ${version} and this CLI is ${cliVersion}: commands may not match; install the CLI of the server's release (${line(version)})`,
  };
}
