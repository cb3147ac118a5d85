import { mcpRoutes, type McpTool, type McpVersion } from '../../../api/mcp.js';
import type { StatusTarget } from '../loaders.js';
import { linesOf, oneLine, plural, settle, when } from './read.js';

/** Versions listed: the newest ones are what a user rolls back to. */
const VERSIONS_SHOWN = 10;

function versionLine(v: McpVersion, serving: number | undefined): string {
  const marks = [v.version === serving ? 'serving' : v.current ? 'current, serves nothing' : '', v.yanked ? 'yanked' : ''].filter(Boolean).join(', ');
  return `  v${String(v.version).padEnd(4)} ${(v.state ?? '-').padEnd(9)} ${plural(v.tool_count, 'tool').padEnd(9)} ${when(v.created_at)}${marks ? `  (${marks})` : ''}${v.message ? `  ${oneLine(v.message)}` : ''}`;
}

/**
 * An MCP server: state, protocol endpoint, versions (newest first, which one serves), the tools of
 * the serving version and the last error. The server's `version` serves when it has a `url` (an
 * emptied server keeps a current version that serves nothing). Tool descriptions come from the
 * tools route (the current tool set, which a publish changes before its build ends), so they are
 * shown only when that set names exactly the serving version's tools.
 */
export async function mcpDetails(t: StatusTarget, name: string): Promise<string[]> {
  const params = { projectID: t.project, name };
  const [server, versions, tools] = await Promise.all([
    settle(t.client.call(mcpRoutes.get, { params })),
    settle(t.client.call(mcpRoutes.versions, { params })),
    settle(t.client.call(mcpRoutes.tools, { params })),
  ]);
  const m = server.ok ? server.value.mcp_server : undefined;
  const serving = m?.url ? m.version : undefined;
  const out = linesOf(`MCP server ${name}`, server, ({ mcp_server: s }) => [
    `MCP server ${s.name}: ${s.state}${s.ready ? ' (ready)' : ''} · ${s.expose === 'apps' ? 'published on the apps domain' : 'private (inside the platform)'}`,
    `endpoint ${s.url ? `${s.url}/mcp` : 'none yet (nothing serves)'}`,
    `serving ${s.version === undefined ? 'no version' : `v${s.version}`}${s.image ? ` · image ${s.image}` : ''}`,
  ]);
  out.push('', 'versions (newest first):');
  out.push(...linesOf('  versions', versions, (v) => (v.versions.length ? v.versions.slice(0, VERSIONS_SHOWN).map((x) => versionLine(x, serving)) : ['  none: publish a tool to make one'])));

  const servingVersion = versions.ok ? versions.value.versions.find((v) => v.version === serving) : undefined;
  out.push('', `tools of the serving version${serving === undefined ? '' : ` v${serving}`}:`);
  if (serving === undefined) out.push('  none: no version serves');
  else if (!servingVersion) out.push(...(versions.ok ? [`  v${serving} is not among the versions listed`] : ['  unknown: the versions could not be read']));
  else {
    const described = new Map<string, McpTool>();
    const sameSet = (names: string[]) => names.length === servingVersion.tool_names.length && names.every((n) => servingVersion.tool_names.includes(n));
    if (tools.ok && sameSet(tools.value.tools.map((x) => x.name))) for (const tool of tools.value.tools) described.set(tool.name, tool);
    if (!tools.ok) out.push(`  descriptions: cannot read: ${tools.error}`);
    out.push(...(servingVersion.tool_names.length ? servingVersion.tool_names.map((n) => `  ${n.padEnd(24)} ${oneLine(described.get(n)?.description ?? '')}`.trimEnd()) : ['  none']));
  }

  // The server's message says why a build or rollout failed; else the newest failed version's.
  const failed = versions.ok ? versions.value.versions.find((v) => v.state === 'failed' && v.message) : undefined;
  const lastError = m?.message ?? (failed ? `v${failed.version}: ${failed.message}` : undefined);
  out.push('', `last error: ${lastError ? oneLine(lastError) : 'none'}`);
  return out;
}
