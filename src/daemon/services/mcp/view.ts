import type { McpServer, McpTool, McpVersion } from '../../../api/mcp.js';
import type { DaemonConfig } from '../../config.js';
import { parseTools, type ServerRow, type ToolRow, type VersionRow } from './store.js';

/**
 * Where a server answers (docs/decisions/mcp.md, Daemon area): a private server only on the
 * daemon's internal loopback listener, an exposed one on the main listener (the internal one
 * serves it too). The protocol endpoint is this plus /mcp.
 */
export function serverUrl(config: DaemonConfig, short: string, name: string, expose: string): string {
  const port = expose === 'apps' ? config.port : config.internalPort;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  return `http://${host}:${port}/mcp/${short}/${name}`;
}

/** The url a workload of the platform uses: the internal listener for every server (it serves both). */
export function internalUrl(config: DaemonConfig, short: string, name: string): string {
  return serverUrl(config, short, name, '');
}

export interface ManifestTool {
  name: string;
  module?: string;
  description?: string;
  inputSchema?: Record<string, unknown>;
}

export const manifestTools = (v: VersionRow | undefined): ManifestTool[] => (v?.manifest ? ((JSON.parse(v.manifest) as { tools?: ManifestTool[] }).tools ?? []) : []);

export function serverView(config: DaemonConfig, short: string, s: ServerRow, toolNames: string[], current: VersionRow | undefined): McpServer {
  // An emptied server (its last tool deleted) has a current version but serves nothing: no url.
  const serving = s.serving_version !== null;
  return {
    name: s.name,
    visibility: '',
    expose: s.expose,
    state: s.state,
    ready: s.state === 'ready',
    ...(serving ? { url: serverUrl(config, short, s.name, s.expose) } : {}),
    ...(current ? { version: current.version, ...(current.image ? { image: current.image } : {}) } : {}),
    tool_names: toolNames,
    tool_count: toolNames.length,
    ...(s.message ? { message: s.message } : {}),
    created_at: s.created_at,
  };
}

/** A tool of the current set; description and schema fall back to what the runtime derived. */
export function toolView(t: ToolRow, derived: ManifestTool[]): McpTool {
  const keys = JSON.parse(t.credential_keys) as string[];
  const found = derived.find((m) => (m.module ?? m.name) === t.name);
  return {
    name: t.name,
    description: t.description ?? found?.description ?? '',
    handler: t.handler,
    schema: t.schema ? (JSON.parse(t.schema) as Record<string, unknown>) : (found?.inputSchema ?? {}),
    credential_keys: keys,
    credentialKeys: keys,
    updated_at: t.updated_at,
  };
}

export function versionView(v: VersionRow, currentVersion: number | null): McpVersion {
  const tools = parseTools(v);
  const keys = [...new Set(tools.flatMap((t) => t.credential_keys))].sort();
  return {
    version: v.version,
    state: v.state,
    ...(v.image_digest ? { image_digest: v.image_digest } : {}),
    credential_keys: keys,
    tool_names: tools.map((t) => t.name),
    tool_count: tools.length,
    current: v.version === currentVersion,
    ...(v.yanked_at ? { yanked: true, yanked_at: v.yanked_at } : {}),
    ...(v.state === 'failed' && v.message ? { message: v.message } : {}),
    created_at: v.created_at,
  };
}
