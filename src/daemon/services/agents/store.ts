import { stmt, type Db } from '../../store/db.js';
import type { AgentState, LogLine } from '../../../api/agents.js';
import { openText, sealText } from '../../crypto/sealed.js';

/** Additional data of a sealed agent secret: a value copied onto another agent or key fails to open. */
const secretAad = (agentId: string, key: string) => `agent-secret:${agentId}:${key}`;
type KvTable = 'agents_secrets' | 'agents_env';
/** Stored form of each value: secrets sealed (AES-256-GCM under the master key), env as is. */
const storedRows = (db: Db, table: KvTable, agentId: string, map: Record<string, string>) =>
  Object.entries(map).map(([k, v]) => [k, table === 'agents_secrets' ? sealText(db, v, secretAad(agentId, k)) : v] as const);

export interface AgentRow {
  id: string;
  project_id: string;
  name: string;
  kind: 'agent' | 'function';
  framework: string;
  runtime: string | null;
  owner: string | null;
  state: AgentState;
  message: string;
  image: string | null;
  latest_revision: string | null;
  /** Where requests go; null until a revision first serves (then latest_revision is used). */
  serving_revision?: string | null;
  /** The split as set (JSON list of targets); null for the default, every request to the latest. */
  traffic?: string | null;
  config: string;
  workload_key: string | null;
  created_at: string;
  updated_at: string;
}

export interface RevisionRow {
  id: string;
  agent_id: string;
  seq: number;
  name: string;
  reason: 'deploy' | 'redeploy' | 'config' | 'secrets' | 'env';
  build_id: string;
  image: string | null;
  artifact: string | null;
  env: string;
  secret_keys: string;
  config: string;
  state: 'deploying' | 'ready' | 'failed';
  message: string;
  created_at: string;
  /** Ids of the MCP servers ready when the revision was rolled (JSON list). */
  mcp_servers?: string;
}

export interface BuildRow {
  id: string;
  agent_id: string;
  reason: 'deploy' | 'redeploy';
  state: 'queued' | 'running' | 'succeeded' | 'failed' | 'superseded';
  queued_at: string;
  claimed_at: string | null;
  finished_at: string | null;
  output: string;
}

export interface FileRow {
  path: string;
  content: Buffer;
  mode: number;
  updated_at: string;
}

export interface InstanceRow {
  id: string;
  agent_id: string;
  revision: string;
  driver: string;
  pid: number | null;
  container: string | null;
  port: number;
  started_at: string;
}

/** SQL of the agents area; never sees HTTP. Callers wrap read-then-write sequences in tx(). */
export const agentStore = {
  byName(db: Db, projectId: string, name: string): AgentRow | undefined {
    return stmt(db, 'SELECT * FROM agents_agents WHERE project_id = ? AND name = ?').get(projectId, name) as AgentRow | undefined;
  },
  byId(db: Db, id: string): AgentRow | undefined {
    return stmt(db, 'SELECT * FROM agents_agents WHERE id = ?').get(id) as AgentRow | undefined;
  },
  all(db: Db): AgentRow[] {
    return stmt(db, 'SELECT * FROM agents_agents').all() as AgentRow[];
  },
  /** One page of a project set, optionally limited to one owner; ordered by an immutable key. */
  list(db: Db, projectIds: string[], owner: string | undefined, limit: number, offset: number): AgentRow[] {
    if (!projectIds.length) return [];
    const marks = projectIds.map(() => '?').join(',');
    const ownerSql = owner === undefined ? '' : ' AND owner = ?';
    return db
      .prepare(`SELECT * FROM agents_agents WHERE project_id IN (${marks})${ownerSql} ORDER BY name, id LIMIT ? OFFSET ?`)
      .all(...projectIds, ...(owner === undefined ? [] : [owner]), limit, offset) as AgentRow[];
  },
  countInProject(db: Db, projectId: string, exceptName?: string): number {
    return (
      stmt(db, 'SELECT COUNT(*) AS n FROM agents_agents WHERE project_id = ? AND name != ?').get(projectId, exceptName ?? '') as { n: number }
    ).n;
  },
  namesIn(db: Db, projectIds: string[]): string[] {
    if (!projectIds.length) return [];
    const marks = projectIds.map(() => '?').join(',');
    return (db.prepare(`SELECT name FROM agents_agents WHERE project_id IN (${marks}) ORDER BY name`).all(...projectIds) as { name: string }[]).map(
      (r) => r.name,
    );
  },
  unowned(db: Db): string[] {
    return (stmt(db, `SELECT name FROM agents_agents WHERE owner IS NULL OR owner = '' ORDER BY name`).all() as { name: string }[]).map((r) => r.name);
  },
  insert(db: Db, row: AgentRow): void {
    stmt(
      db,
      `INSERT INTO agents_agents (id, project_id, name, kind, framework, runtime, owner, state, message, image, latest_revision, config, workload_key, created_at, updated_at)
       VALUES (@id, @project_id, @name, @kind, @framework, @runtime, @owner, @state, @message, @image, @latest_revision, @config, @workload_key, @created_at, @updated_at)`,
    ).run(row);
  },
  update(db: Db, id: string, change: Partial<Omit<AgentRow, 'id'>>, now: string): void {
    const keys = Object.keys(change);
    if (!keys.length) return;
    const sets = keys.map((k) => `${k} = @${k}`).join(', ');
    db.prepare(`UPDATE agents_agents SET ${sets}, updated_at = @updated_at WHERE id = @id`).run({ ...change, id, updated_at: now });
  },
  remove(db: Db, id: string): void {
    stmt(db, 'DELETE FROM agents_agents WHERE id = ?').run(id);
  },

  // Revisions
  latestRevision(db: Db, agentId: string): RevisionRow | undefined {
    return stmt(db, 'SELECT * FROM agents_revisions WHERE agent_id = ? ORDER BY seq DESC LIMIT 1').get(agentId) as RevisionRow | undefined;
  },
  revisionByName(db: Db, agentId: string, name: string): RevisionRow | undefined {
    return stmt(db, 'SELECT * FROM agents_revisions WHERE agent_id = ? AND name = ?').get(agentId, name) as RevisionRow | undefined;
  },
  revisions(db: Db, agentId: string, limit: number, offset: number): RevisionRow[] {
    return stmt(db, 'SELECT * FROM agents_revisions WHERE agent_id = ? ORDER BY seq DESC LIMIT ? OFFSET ?').all(agentId, limit, offset) as RevisionRow[];
  },
  insertRevision(db: Db, row: RevisionRow): void {
    stmt(
      db,
      `INSERT INTO agents_revisions (id, agent_id, seq, name, reason, build_id, image, artifact, env, secret_keys, config, state, message, created_at, mcp_servers)
       VALUES (@id, @agent_id, @seq, @name, @reason, @build_id, @image, @artifact, @env, @secret_keys, @config, @state, @message, @created_at, @mcp_servers)`,
    ).run({ mcp_servers: '[]', ...row });
  },
  setRevisionState(db: Db, agentId: string, name: string, state: RevisionRow['state'], message: string): void {
    stmt(db, 'UPDATE agents_revisions SET state = ?, message = ? WHERE agent_id = ? AND name = ?').run(state, message, agentId, name);
  },
  revisionBySeq(db: Db, agentId: string, seq: number): RevisionRow | undefined {
    return stmt(db, 'SELECT * FROM agents_revisions WHERE agent_id = ? AND seq = ?').get(agentId, seq) as RevisionRow | undefined;
  },
  nextRevisionSeq(db: Db, agentId: string): number {
    return ((stmt(db, 'SELECT MAX(seq) AS s FROM agents_revisions WHERE agent_id = ?').get(agentId) as { s: number | null }).s ?? 0) + 1;
  },

  // Builds
  build(db: Db, id: string): BuildRow | undefined {
    return stmt(db, 'SELECT * FROM agents_builds WHERE id = ?').get(id) as BuildRow | undefined;
  },
  activeBuild(db: Db, agentId: string): BuildRow | undefined {
    return stmt(db, `SELECT * FROM agents_builds WHERE agent_id = ? AND state IN ('queued','running') ORDER BY queued_at DESC LIMIT 1`).get(agentId) as
      | BuildRow
      | undefined;
  },
  latestBuild(db: Db, agentId: string): BuildRow | undefined {
    return stmt(db, 'SELECT * FROM agents_builds WHERE agent_id = ? ORDER BY queued_at DESC, rowid DESC LIMIT 1').get(agentId) as BuildRow | undefined;
  },
  buildsInState(db: Db, state: BuildRow['state']): BuildRow[] {
    return stmt(db, 'SELECT * FROM agents_builds WHERE state = ? ORDER BY queued_at').all(state) as BuildRow[];
  },
  insertBuild(db: Db, row: BuildRow): void {
    stmt(
      db,
      `INSERT INTO agents_builds (id, agent_id, reason, state, queued_at, claimed_at, finished_at, output)
       VALUES (@id, @agent_id, @reason, @state, @queued_at, @claimed_at, @finished_at, @output)`,
    ).run(row);
  },
  /** Claims a queued build; false when someone else moved it first. */
  claimBuild(db: Db, id: string, now: string): boolean {
    return stmt(db, `UPDATE agents_builds SET state = 'running', claimed_at = ? WHERE id = ? AND state = 'queued'`).run(now, id).changes === 1;
  },
  finishBuild(db: Db, id: string, state: BuildRow['state'], output: string, now: string): void {
    stmt(db, 'UPDATE agents_builds SET state = ?, output = ?, finished_at = ? WHERE id = ?').run(state, output, now, id);
  },
  requeueBuild(db: Db, id: string): void {
    stmt(db, `UPDATE agents_builds SET state = 'queued', claimed_at = NULL WHERE id = ?`).run(id);
  },

  // Files
  files(db: Db, agentId: string): FileRow[] {
    return stmt(db, 'SELECT path, content, mode, updated_at FROM agents_files WHERE agent_id = ? ORDER BY path').all(agentId) as FileRow[];
  },
  fileInfos(db: Db, agentId: string): { path: string; size: number; updated_at: string }[] {
    return stmt(db, 'SELECT path, length(content) AS size, updated_at FROM agents_files WHERE agent_id = ? ORDER BY path').all(agentId) as {
      path: string;
      size: number;
      updated_at: string;
    }[];
  },
  file(db: Db, agentId: string, path: string): FileRow | undefined {
    return stmt(db, 'SELECT path, content, mode, updated_at FROM agents_files WHERE agent_id = ? AND path = ?').get(agentId, path) as FileRow | undefined;
  },
  fileCount(db: Db, agentId: string): number {
    return (stmt(db, 'SELECT COUNT(*) AS n FROM agents_files WHERE agent_id = ?').get(agentId) as { n: number }).n;
  },
  replaceFiles(db: Db, agentId: string, files: { path: string; content: Buffer; mode: number }[], now: string): void {
    stmt(db, 'DELETE FROM agents_files WHERE agent_id = ?').run(agentId);
    const ins = stmt(db, 'INSERT INTO agents_files (agent_id, path, content, mode, updated_at) VALUES (?, ?, ?, ?, ?)');
    for (const f of files) ins.run(agentId, f.path, f.content, f.mode, now);
  },
  putFile(db: Db, agentId: string, path: string, content: Buffer, now: string): void {
    stmt(
      db,
      `INSERT INTO agents_files (agent_id, path, content, mode, updated_at) VALUES (?, ?, ?, 420, ?)
       ON CONFLICT (agent_id, path) DO UPDATE SET content = excluded.content, updated_at = excluded.updated_at`,
    ).run(agentId, path, content, now);
  },
  deleteFile(db: Db, agentId: string, path: string): boolean {
    return stmt(db, 'DELETE FROM agents_files WHERE agent_id = ? AND path = ?').run(agentId, path).changes === 1;
  },

  // Secrets and env share one shape.
  // Secret values are sealed at rest under the daemon's master key (AES-256-GCM, bound to agent and key).
  kv(db: Db, table: KvTable, agentId: string): Record<string, string> {
    const rows = db.prepare(`SELECT key, value FROM ${table} WHERE agent_id = ? ORDER BY key`).all(agentId) as { key: string; value: string }[];
    const read = table === 'agents_secrets' ? (r: { key: string; value: string }) => openText(db, r.value, secretAad(agentId, r.key)) : (r: { value: string }) => r.value;
    return Object.fromEntries(rows.map((r) => [r.key, read(r)]));
  },
  /** Secret key names only: needs no master key, so listing works while the store is sealed. */
  kvKeys(db: Db, table: KvTable, agentId: string): string[] {
    return (db.prepare(`SELECT key FROM ${table} WHERE agent_id = ? ORDER BY key`).all(agentId) as { key: string }[]).map((r) => r.key);
  },
  replaceKv(db: Db, table: KvTable, agentId: string, map: Record<string, string>): void {
    // Seal before deleting: a sealed store then refuses the write without touching the rows.
    const rows = storedRows(db, table, agentId, map);
    db.prepare(`DELETE FROM ${table} WHERE agent_id = ?`).run(agentId);
    const ins = db.prepare(`INSERT INTO ${table} (agent_id, key, value) VALUES (?, ?, ?)`);
    for (const [k, v] of rows) ins.run(agentId, k, v);
  },
  /** Sets and removes single keys, leaving the others untouched (secret bindings' apply and unbind). */
  patchKv(db: Db, table: KvTable, agentId: string, set: Record<string, string>, remove: string[]): void {
    const rows = storedRows(db, table, agentId, set);
    const del = db.prepare(`DELETE FROM ${table} WHERE agent_id = ? AND key = ?`);
    for (const k of remove) del.run(agentId, k);
    const put = db.prepare(`INSERT INTO ${table} (agent_id, key, value) VALUES (?, ?, ?) ON CONFLICT (agent_id, key) DO UPDATE SET value = excluded.value`);
    for (const [k, v] of rows) put.run(agentId, k, v);
  },

  // Logs
  insertLogs(db: Db, agentId: string, lines: LogLine[]): void {
    const ins = stmt(db, 'INSERT INTO agents_logs (agent_id, ts, revision, instance, stream, message) VALUES (?, ?, ?, ?, ?, ?)');
    for (const l of lines) ins.run(agentId, l.ts, l.revision, l.instance, l.stream, l.message);
  },
  /** The newest `limit` lines at or after `since`, returned oldest first. */
  logHistory(db: Db, agentId: string, limit: number, since?: string): LogLine[] {
    const rows = db
      .prepare(
        `SELECT ts, revision, instance, stream, message FROM agents_logs
         WHERE agent_id = ? AND ts >= ? ORDER BY seq DESC LIMIT ?`,
      )
      .all(agentId, since ?? '', limit) as LogLine[];
    return rows.reverse();
  },
  pruneLogs(db: Db, before: string): number {
    return stmt(db, 'DELETE FROM agents_logs WHERE ts < ?').run(before).changes;
  },

  // Instances
  instances(db: Db): InstanceRow[] {
    return stmt(db, 'SELECT * FROM agents_instances').all() as InstanceRow[];
  },
  insertInstance(db: Db, row: InstanceRow): void {
    stmt(
      db,
      `INSERT INTO agents_instances (id, agent_id, revision, driver, pid, container, port, started_at)
       VALUES (@id, @agent_id, @revision, @driver, @pid, @container, @port, @started_at)`,
    ).run(row);
  },
  deleteInstance(db: Db, id: string): void {
    stmt(db, 'DELETE FROM agents_instances WHERE id = ?').run(id);
  },
};
