import type { McpState } from '../../../api/mcp.js';
import { stmt, type Db } from '../../store/db.js';

/** SQL of the MCP servers area; knows nothing of HTTP, roles, builds or encryption. */

export interface ServerRow {
  id: string;
  project_id: string;
  name: string;
  expose: string;
  state: McpState;
  message: string;
  current_version: number | null;
  serving_version: number | null;
  bearer_sealed: string;
  workload_key_sealed: string;
  created_at: string;
  updated_at: string;
}

export interface ToolRow {
  server_id: string;
  name: string;
  handler: string;
  description: string | null;
  schema: string | null;
  credential_keys: string;
  updated_at: string;
}

/** One tool as a version snapshots it. */
export interface ToolSnapshot {
  name: string;
  handler: string;
  description: string | null;
  schema: Record<string, unknown> | null;
  credential_keys: string[];
}

export interface VersionRow {
  server_id: string;
  version: number;
  build_id: string;
  tools: string;
  state: McpState;
  message: string;
  image: string | null;
  image_digest: string | null;
  artifact: string | null;
  manifest: string | null;
  output: string;
  yanked_at: string | null;
  created_at: string;
}

export interface InstanceRow {
  id: string;
  server_id: string;
  version: number;
  driver: string;
  pid: number | null;
  container: string | null;
  port: number;
  started_at: string;
}

export const mcpStore = {
  byName: (db: Db, projectId: string, name: string) =>
    stmt(db, 'SELECT * FROM mcp_servers WHERE project_id = ? AND name = ?').get(projectId, name) as ServerRow | undefined,
  byId: (db: Db, id: string) => stmt(db, 'SELECT * FROM mcp_servers WHERE id = ?').get(id) as ServerRow | undefined,
  /** By project short and name: the protocol endpoint's lookup (hot path). */
  byShort: (db: Db, short: string, name: string) =>
    stmt(db, 'SELECT s.* FROM mcp_servers s JOIN acct_projects p ON p.id = s.project_id WHERE p.short = ? AND s.name = ?').get(short, name) as ServerRow | undefined,
  list: (db: Db, projectId: string, limit: number, offset: number) =>
    db.prepare('SELECT * FROM mcp_servers WHERE project_id = ? ORDER BY name LIMIT ? OFFSET ?').all(projectId, limit, offset) as ServerRow[],
  all: (db: Db) => db.prepare('SELECT * FROM mcp_servers').all() as ServerRow[],
  inProject: (db: Db, projectId: string) => db.prepare('SELECT * FROM mcp_servers WHERE project_id = ? ORDER BY name').all(projectId) as ServerRow[],
  countInProject: (db: Db, projectId: string) => (db.prepare('SELECT COUNT(*) AS n FROM mcp_servers WHERE project_id = ?').get(projectId) as { n: number }).n,
  insert: (db: Db, r: ServerRow) =>
    void db
      .prepare(
        `INSERT INTO mcp_servers (id, project_id, name, expose, state, message, current_version, serving_version, bearer_sealed, workload_key_sealed, created_at, updated_at)
         VALUES (@id, @project_id, @name, @expose, @state, @message, @current_version, @serving_version, @bearer_sealed, @workload_key_sealed, @created_at, @updated_at)`,
      )
      .run(r),
  update(db: Db, id: string, change: Partial<Pick<ServerRow, 'state' | 'message' | 'current_version' | 'serving_version'>>, now: string): void {
    const keys = Object.keys(change) as (keyof typeof change)[];
    if (!keys.length) return;
    db.prepare(`UPDATE mcp_servers SET ${keys.map((k) => `${k} = @${k}`).join(', ')}, updated_at = @now WHERE id = @id`).run({ ...change, now, id });
  },
  remove: (db: Db, id: string) => void db.prepare('DELETE FROM mcp_servers WHERE id = ?').run(id),

  tools: (db: Db, serverId: string) => db.prepare('SELECT * FROM mcp_tools WHERE server_id = ? ORDER BY name').all(serverId) as ToolRow[],
  toolNames: (db: Db, serverId: string) => (db.prepare('SELECT name FROM mcp_tools WHERE server_id = ? ORDER BY name').all(serverId) as { name: string }[]).map((r) => r.name),
  tool: (db: Db, serverId: string, name: string) => db.prepare('SELECT * FROM mcp_tools WHERE server_id = ? AND name = ?').get(serverId, name) as ToolRow | undefined,
  upsertTool: (db: Db, t: ToolRow) =>
    void db
      .prepare(
        `INSERT INTO mcp_tools (server_id, name, handler, description, schema, credential_keys, updated_at)
         VALUES (@server_id, @name, @handler, @description, @schema, @credential_keys, @updated_at)
         ON CONFLICT (server_id, name) DO UPDATE SET handler = excluded.handler, description = excluded.description,
           schema = excluded.schema, credential_keys = excluded.credential_keys, updated_at = excluded.updated_at`,
      )
      .run(t),
  /** Replaces the whole current tool set (a rollback makes the version's set current again). */
  replaceTools(db: Db, serverId: string, tools: ToolSnapshot[], now: string): void {
    db.prepare('DELETE FROM mcp_tools WHERE server_id = ?').run(serverId);
    for (const t of tools) {
      mcpStore.upsertTool(db, {
        server_id: serverId,
        name: t.name,
        handler: t.handler,
        description: t.description,
        schema: t.schema ? JSON.stringify(t.schema) : null,
        credential_keys: JSON.stringify(t.credential_keys),
        updated_at: now,
      });
    }
  },
  deleteTool: (db: Db, serverId: string, name: string) => db.prepare('DELETE FROM mcp_tools WHERE server_id = ? AND name = ?').run(serverId, name).changes > 0,

  versions: (db: Db, serverId: string) => db.prepare('SELECT * FROM mcp_versions WHERE server_id = ? ORDER BY version DESC').all(serverId) as VersionRow[],
  version: (db: Db, serverId: string, v: number) => stmt(db, 'SELECT * FROM mcp_versions WHERE server_id = ? AND version = ?').get(serverId, v) as VersionRow | undefined,
  versionByBuild: (db: Db, buildId: string) => db.prepare('SELECT * FROM mcp_versions WHERE build_id = ?').get(buildId) as VersionRow | undefined,
  newestVersion: (db: Db, serverId: string) => (db.prepare('SELECT MAX(version) AS v FROM mcp_versions WHERE server_id = ?').get(serverId) as { v: number | null }).v ?? 0,
  insertVersion: (db: Db, r: VersionRow) =>
    void db
      .prepare(
        `INSERT INTO mcp_versions (server_id, version, build_id, tools, state, message, image, image_digest, artifact, manifest, output, yanked_at, created_at)
         VALUES (@server_id, @version, @build_id, @tools, @state, @message, @image, @image_digest, @artifact, @manifest, @output, @yanked_at, @created_at)`,
      )
      .run(r),
  updateVersion(db: Db, serverId: string, v: number, change: Partial<Pick<VersionRow, 'state' | 'message' | 'image' | 'image_digest' | 'artifact' | 'manifest' | 'output' | 'yanked_at'>>): void {
    const keys = Object.keys(change) as (keyof typeof change)[];
    if (!keys.length) return;
    db.prepare(`UPDATE mcp_versions SET ${keys.map((k) => `${k} = @${k}`).join(', ')} WHERE server_id = @serverId AND version = @v`).run({ ...change, serverId, v });
  },
  /** Claims a pending version for its build; false when it was claimed or removed meanwhile. */
  claim: (db: Db, buildId: string) => db.prepare(`UPDATE mcp_versions SET state = 'building' WHERE build_id = ? AND state = 'pending'`).run(buildId).changes > 0,
  versionsInState: (db: Db, state: McpState) => db.prepare('SELECT * FROM mcp_versions WHERE state = ? ORDER BY server_id, version').all(state) as VersionRow[],
  /** Whether any version of any server still runs from this artifact (content-addressed: shared). */
  artifactUsed: (db: Db, artifact: string) => Boolean(db.prepare('SELECT 1 FROM mcp_versions WHERE artifact = ? LIMIT 1').get(artifact)),
  artifactsOf: (db: Db, serverId: string) =>
    (db.prepare('SELECT DISTINCT artifact FROM mcp_versions WHERE server_id = ? AND artifact IS NOT NULL').all(serverId) as { artifact: string }[]).map((r) => r.artifact),
  /** A built artifact with this digest, from any server: an identical tool set is not built again. */
  builtWithDigest: (db: Db, digest: string) =>
    db.prepare(`SELECT * FROM mcp_versions WHERE image_digest = ? AND artifact IS NOT NULL AND manifest IS NOT NULL LIMIT 1`).get(digest) as VersionRow | undefined,

  instances: (db: Db) => db.prepare('SELECT * FROM mcp_instances').all() as InstanceRow[],
  instanceCount: (db: Db, projectId: string) =>
    (db.prepare('SELECT COUNT(*) AS n FROM mcp_instances i JOIN mcp_servers s ON s.id = i.server_id WHERE s.project_id = ?').get(projectId) as { n: number }).n,
  insertInstance: (db: Db, r: InstanceRow) =>
    void db
      .prepare('INSERT OR REPLACE INTO mcp_instances (id, server_id, version, driver, pid, container, port, started_at) VALUES (@id, @server_id, @version, @driver, @pid, @container, @port, @started_at)')
      .run(r),
  deleteInstance: (db: Db, id: string) => void db.prepare('DELETE FROM mcp_instances WHERE id = ?').run(id),
};

export const parseTools = (v: VersionRow): ToolSnapshot[] => JSON.parse(v.tools) as ToolSnapshot[];
