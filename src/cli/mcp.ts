import { Args, Flags } from '@oclif/core';
import type { McpServer, McpVersion } from '../api/mcp.js';
import type { ApiClient } from '../client/api-client.js';
import { waitForVersion, type ServerRef } from '../client/mcp.js';
import { startSpinner } from './spinner.js';
import type { Column } from './render.js';

/** Shared pieces of the `platform mcp` commands (spec 2 §2.2, §4.2). */

export const serverArg = Args.string({ description: 'MCP server name', required: true });
export const versionArg = Args.string({ description: 'version number (see `platform mcp versions SERVER`)', required: true });

export const waitFlags = {
  wait: Flags.boolean({ description: 'wait until the new version is ready (or failed: exit 1 with the message)', default: false }),
  verbose: Flags.boolean({ description: 'with --wait: print every state change on stderr instead of a spinner' }),
  timeout: Flags.integer({ description: 'with --wait: seconds before giving up', default: 600, min: 1 }),
};

/** The fields a person reads first, in a stable order; the protocol endpoint spelled out. */
export function serverFields(s: McpServer): Record<string, unknown> {
  return {
    name: s.name,
    state: s.state,
    ready: s.ready,
    version: s.version,
    tools: s.tool_names,
    expose: s.expose || 'private (reachable only inside the platform)',
    url: s.url,
    endpoint: s.url ? `${s.url}/mcp` : undefined,
    image: s.image,
    message: s.message,
    created_at: s.created_at,
  };
}

export const serverColumns: Column<McpServer>[] = [
  { header: 'name', get: (s) => s.name },
  { header: 'state', get: (s) => s.state },
  { header: 'version', get: (s) => s.version },
  { header: 'tools', get: (s) => s.tool_count },
  { header: 'expose', get: (s) => s.expose || 'private' },
  { header: 'url', get: (s) => s.url },
];

const shortDigest = (d?: string) => (d ? d.replace(/^(sha256:)?([0-9a-f]{12})[0-9a-f]*$/, '$1$2') : undefined);

export const versionColumns: Column<McpVersion>[] = [
  { header: 'version', get: (v) => (v.current ? `${v.version} (current)` : v.version) },
  { header: 'state', get: (v) => (v.yanked ? `${v.state ?? '-'} (yanked)` : v.state) },
  { header: 'tools', get: (v) => v.tool_names },
  { header: 'credential keys', get: (v) => v.credential_keys },
  { header: 'digest', get: (v) => shortDigest(v.image_digest) },
  { header: 'created', get: (v) => v.created_at },
];

/**
 * `--wait`: a spinner (stderr) until the version serves; `--verbose` prints each state change as
 * a line instead. Failure (or the timeout) ends the spinner and rethrows the AbortError.
 */
export async function waitWithProgress(
  client: ApiClient,
  ref: ServerRef,
  version: number | undefined,
  o: { json: boolean; verbose?: boolean; timeout: number },
): Promise<McpServer> {
  const verbose = !!o.verbose && !o.json;
  const label = `${ref.server}${version ? ` version ${version}` : ''}`;
  const spinner = startSpinner(`${label}: building`, { quiet: o.json || verbose });
  try {
    const { server } = await waitForVersion(client, ref, {
      version,
      timeoutMs: o.timeout * 1000,
      onState: (u) => {
        const line = `${ref.server} version ${u.version}: ${u.state}${u.message && u.state !== 'failed' ? ` (${u.message.split('\n')[0]!.slice(0, 80)})` : ''}`;
        if (verbose) process.stderr.write(`${line}\n`);
        else spinner.update(line);
      },
    });
    spinner.succeed(`${ref.server} version ${server.version}: ready`);
    return server;
  } catch (e) {
    spinner.fail(`${label}: not ready`);
    throw e;
  }
}
