import { MCP_TOOL_NAME_RE, type McpPublishBody } from '../../../api/mcp.js';
import type { PageQuery } from '../../../api/common.js';
import type { AreaContext } from '../../area.js';
import { writeAudit } from '../../audit.js';
import { isoNow } from '../../clock.js';
import { ApiError, badRequest, conflict, notFound } from '../../http/errors.js';
import { Reply } from '../../http/router.js';
import { newId } from '../../ids.js';
import { tx } from '../../store/db.js';
import type { Principal } from '../auth/principal.js';
import { createWorkloadKey, revokeWorkloadKeys } from '../auth/keys.js';
import { accessProject } from '../accounts/projects.js';
import type { ProjectAccess } from '../accounts/access.js';
import { bearerOf, forgetBearer, mintBearer, sealBearer, sealWorkloadKey } from './credentials.js';
import { callInstance } from './rpc.js';
import type { McpRuntime } from './runtime.js';
import { mcpStore, parseTools, type ServerRow, type ToolSnapshot, type VersionRow } from './store.js';
import { manifestTools, serverView, toolView, versionView } from './view.js';

export interface Deps {
  ctx: AreaContext;
  rt: McpRuntime;
}

export const serverNotFound = (name: string) => notFound(`MCP server ${name} not found`);

/** The workload key's owner name: MCP servers and agents share a project's names, not their keys. */
export const workloadName = (server: string) => `mcp/${server}`;

function member(d: Deps, principal: Principal, ref: string): ProjectAccess {
  return accessProject(d.ctx, principal, ref, 'member');
}

/** Spec 2 §5: server create and delete, tool publish and delete, version actions need project admin. */
export function admin(d: Deps, principal: Principal, ref: string): ProjectAccess {
  return accessProject(d.ctx, principal, ref, 'resource-admin');
}

export function serverOr404(d: Deps, projectId: string, name: string): ServerRow {
  const s = mcpStore.byName(d.ctx.db, projectId, name);
  if (!s) throw serverNotFound(name);
  return s;
}

const current = (d: Deps, s: ServerRow) => (s.current_version === null ? undefined : mcpStore.version(d.ctx.db, s.id, s.current_version));

function view(d: Deps, short: string, s: ServerRow) {
  return serverView(d.ctx.config, short, s, mcpStore.toolNames(d.ctx.db, s.id), current(d, s));
}

/** POST mcpservers: a private (or exposed) server with nothing to build yet (spec 2 §3: pending). */
export function create(d: Deps, principal: Principal, ref: string, body: { name: string; expose?: string }, requestId: string) {
  const access = admin(d, principal, ref);
  const expose = body.expose ?? '';
  if (expose !== '' && expose !== 'apps') throw badRequest('expose must be empty (private, reachable only inside the platform) or apps');
  const { db, clock } = d.ctx;
  const projectId = access.project.id;
  if (mcpStore.byName(db, projectId, body.name)) throw conflict(`MCP server ${body.name} already exists in this project`);
  const id = newId();
  const now = isoNow(clock);
  const row = tx(db, () => {
    if (mcpStore.byName(db, projectId, body.name)) throw conflict(`MCP server ${body.name} already exists in this project`);
    const key = createWorkloadKey(db, clock, projectId, workloadName(body.name));
    const r: ServerRow = {
      id,
      project_id: projectId,
      name: body.name,
      expose,
      state: 'pending',
      message: '',
      current_version: null,
      serving_version: null,
      bearer_sealed: sealBearer(db, id, mintBearer()),
      workload_key_sealed: sealWorkloadKey(db, id, key),
      created_at: now,
      updated_at: now,
    };
    mcpStore.insert(db, r);
    writeAudit(db, clock, { projectId, actor: principal.email, action: 'mcpserver.create', target: body.name, details: { expose }, requestId });
    return r;
  });
  return { mcp_server: view(d, access.project.short, row) };
}

export function list(d: Deps, principal: Principal, ref: string, query: PageQuery) {
  const access = member(d, principal, ref);
  const page = d.ctx.pager.parse(query, `mcpservers:${access.project.id}`);
  const { items, next_page_token } = d.ctx.pager.slice(page, mcpStore.list(d.ctx.db, access.project.id, page.size + 1, page.offset));
  return { mcpservers: items.map((s) => view(d, access.project.short, s)), ...(next_page_token ? { next_page_token } : {}) };
}

export function get(d: Deps, principal: Principal, ref: string, name: string) {
  const access = member(d, principal, ref);
  return { mcp_server: view(d, access.project.short, serverOr404(d, access.project.id, name)) };
}

/** DELETE: stops its instance, drops its rows (the bearer with them) and the artifacts no other version uses. */
export async function remove(d: Deps, principal: Principal, ref: string, name: string, requestId: string) {
  const access = admin(d, principal, ref);
  const { db, clock } = d.ctx;
  const s = serverOr404(d, access.project.id, name);
  const artifacts = mcpStore.artifactsOf(db, s.id);
  tx(db, () => {
    mcpStore.remove(db, s.id);
    revokeWorkloadKeys(db, clock, access.project.id, workloadName(name));
    writeAudit(db, clock, { projectId: access.project.id, actor: principal.email, action: 'mcpserver.delete', target: name, details: { versions: mcpStore.newestVersion(db, s.id) }, requestId });
  });
  forgetBearer(db, s.id);
  await d.rt.removeServer(s.id, artifacts);
  return { name, deleted: true };
}

/** The derived tool list of the newest built version (what the runtime made of the signatures). */
function derived(d: Deps, s: ServerRow) {
  const cur = current(d, s);
  if (cur?.manifest) return manifestTools(cur);
  return manifestTools(mcpStore.versions(d.ctx.db, s.id).find((v) => v.manifest));
}

export function tools(d: Deps, principal: Principal, ref: string, name: string) {
  const access = member(d, principal, ref);
  const s = serverOr404(d, access.project.id, name);
  const m = derived(d, s);
  return { server: name, tools: mcpStore.tools(d.ctx.db, s.id).map((t) => toolView(t, m)) };
}

/** Snapshots the whole current tool set into the next version (pending) and points the server at it. */
export function snapshot(d: Deps, s: ServerRow): VersionRow {
  const { db, clock } = d.ctx;
  const tools: ToolSnapshot[] = mcpStore.tools(db, s.id).map((t) => ({
    name: t.name,
    handler: t.handler,
    description: t.description,
    schema: t.schema ? (JSON.parse(t.schema) as Record<string, unknown>) : null,
    credential_keys: JSON.parse(t.credential_keys) as string[],
  }));
  const v: VersionRow = {
    server_id: s.id,
    version: mcpStore.newestVersion(db, s.id) + 1,
    build_id: newId(),
    tools: JSON.stringify(tools),
    state: 'pending',
    message: '',
    image: null,
    image_digest: null,
    artifact: null,
    manifest: null,
    output: '',
    yanked_at: null,
    created_at: isoNow(clock),
  };
  if (!tools.length) {
    // The last tool was deleted: like a new server, an empty one has nothing to build or run
    // (spec 2 §3, create -> pending). The empty version is recorded and current; nothing serves.
    v.state = 'ready';
    mcpStore.insertVersion(db, v);
    mcpStore.update(db, s.id, { state: 'pending', message: '', current_version: v.version, serving_version: null }, isoNow(clock));
    return v;
  }
  mcpStore.insertVersion(db, v);
  // Spec 2 §3: a PUT or DELETE of a tool moves the server to building.
  mcpStore.update(db, s.id, { state: 'building', message: '' }, isoNow(clock));
  return v;
}

export function checkToolName(tool: string, prefix = ''): void {
  if (!MCP_TOOL_NAME_RE.test(tool)) throw badRequest(`${prefix}invalid tool name ${JSON.stringify(tool)}: must match ^[a-z][a-z0-9_]{0,62}$ (it becomes tools/<name>.py)`);
}

/** The single publish's 400 for a body without source; the set publish prefixes the tool. */
export const handlerRequired = (prefix = '') => badRequest(`${prefix}handler is required: the Python source of the tool module`);

/** PUT tools/{tool}: stores the module and builds a new version with the whole tool set. */
export function publish(d: Deps, principal: Principal, ref: string, name: string, tool: string, body: McpPublishBody, requestId: string) {
  const access = admin(d, principal, ref);
  const { db, clock } = d.ctx;
  const s = serverOr404(d, access.project.id, name);
  checkToolName(tool);
  if (body.handler === undefined || body.handler.trim() === '') throw handlerRequired();
  const keys = [...new Set(body.credential_keys ?? body.credentialKeys ?? [])];
  const v = tx(db, () => {
    mcpStore.upsertTool(db, {
      server_id: s.id,
      name: tool,
      handler: body.handler!,
      description: body.description ?? null,
      schema: body.schema ? JSON.stringify(body.schema) : null,
      credential_keys: JSON.stringify(keys),
      updated_at: isoNow(clock),
    });
    const v = snapshot(d, s);
    writeAudit(db, clock, { projectId: access.project.id, actor: principal.email, action: 'mcpserver.tool.publish', target: `${name}/${tool}`, details: { version: v.version, build_id: v.build_id, credential_keys: keys }, requestId });
    return v;
  });
  d.rt.enqueue(v.build_id);
  return new Reply(202, {
    server: name,
    name: tool,
    published: true,
    build_id: v.build_id,
    version: v.version,
    note: `version ${v.version} is building with the whole tool set; poll GET .../mcpservers/${name} until ready`,
  });
}

/** DELETE tools/{tool}: builds a new version without it. */
export function deleteTool(d: Deps, principal: Principal, ref: string, name: string, tool: string, requestId: string) {
  const access = admin(d, principal, ref);
  const { db, clock } = d.ctx;
  const s = serverOr404(d, access.project.id, name);
  const v = tx(db, () => {
    if (!mcpStore.deleteTool(db, s.id, tool)) throw notFound(`tool ${tool} not found on MCP server ${name}`);
    const v = snapshot(d, s);
    writeAudit(db, clock, { projectId: access.project.id, actor: principal.email, action: 'mcpserver.tool.delete', target: `${name}/${tool}`, details: { version: v.version, build_id: v.build_id }, requestId });
    return v;
  });
  const empty = v.state === 'ready';
  if (empty) void d.rt.supervisor.recycle(s.id, `version ${v.version} has no tools`).catch(() => undefined);
  else d.rt.enqueue(v.build_id);
  return new Reply(202, {
    server: name,
    name: tool,
    deleted: true,
    build_id: v.build_id,
    version: v.version,
    note: empty
      ? `version ${v.version} has no tools: the server is pending and serves nothing until a tool is published (or a rollback)`
      : `version ${v.version} is building without ${tool}; the current version serves until it is ready`,
  });
}

export function versions(d: Deps, principal: Principal, ref: string, name: string) {
  const access = member(d, principal, ref);
  const s = serverOr404(d, access.project.id, name);
  return { server: name, versions: mcpStore.versions(d.ctx.db, s.id).map((v) => versionView(v, s.current_version)) };
}

/** Spec 2 §4.2: "400 version not a positive integer", "404 no such version". */
function versionOr404(d: Deps, s: ServerRow, raw: string): VersionRow {
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || !Number.isSafeInteger(Number(raw))) throw badRequest(`version must be a positive integer, got ${JSON.stringify(raw)}`);
  const v = mcpStore.version(d.ctx.db, s.id, Number(raw));
  if (!v) throw notFound(`version ${raw} not found on MCP server ${s.name}`);
  return v;
}

/**
 * :rollback re-points the server at a version's recorded artifact: no build step, so it costs a
 * database write (the version's tool set becomes the current set again); the instance of the old
 * version is replaced on the next request.
 */
export function rollback(d: Deps, principal: Principal, ref: string, name: string, raw: string, requestId: string) {
  const access = admin(d, principal, ref);
  const { db, clock } = d.ctx;
  const s = serverOr404(d, access.project.id, name);
  const v = versionOr404(d, s, raw);
  if (v.yanked_at) throw conflict(`version ${v.version} is yanked: unyank it before rolling back to it`);
  if (!v.artifact || !v.image_digest) throw conflict(`version ${v.version} has no recorded image (state ${v.state}): only a version that was built can be rolled back to`);
  tx(db, () => {
    mcpStore.update(db, s.id, { current_version: v.version, serving_version: v.version, state: 'ready', message: '' }, isoNow(clock));
    // The version's tool set becomes the current one: what serves is what is listed, and the next
    // publish builds on it.
    mcpStore.replaceTools(db, s.id, parseTools(v), isoNow(clock));
    if (v.state !== 'ready') mcpStore.updateVersion(db, s.id, v.version, { state: 'ready', message: '' });
    writeAudit(db, clock, { projectId: access.project.id, actor: principal.email, action: 'mcpserver.version.rollback', target: name, details: { version: v.version, from: s.current_version, image_digest: v.image_digest }, requestId });
  });
  void d.rt.supervisor.recycle(s.id, `rolled back to version ${v.version}`).catch(() => undefined);
  return {
    server: name,
    version: v.version,
    image: v.image ?? v.image_digest,
    rolled_back: true,
    note: `serving version ${v.version} from its recorded image ${v.image_digest} (no rebuild); the next request starts it`,
  };
}

export function yank(d: Deps, principal: Principal, ref: string, name: string, raw: string, yanked: boolean, requestId: string) {
  const access = admin(d, principal, ref);
  const { db, clock } = d.ctx;
  const s = serverOr404(d, access.project.id, name);
  const v = versionOr404(d, s, raw);
  if (yanked && s.current_version === v.version) throw conflict(`version ${v.version} is the version currently running: roll back to another version before yanking it`);
  tx(db, () => {
    mcpStore.updateVersion(db, s.id, v.version, { yanked_at: yanked ? (v.yanked_at ?? isoNow(clock)) : null });
    writeAudit(db, clock, { projectId: access.project.id, actor: principal.email, action: yanked ? 'mcpserver.version.yank' : 'mcpserver.version.unyank', target: name, details: { version: v.version }, requestId });
  });
  return { server: name, version: v.version, yanked };
}

/**
 * POST tools/{tool}:call: a member tries a tool of the running version. The bearer never leaves
 * the platform, so the daemon makes the protocol's tools/call itself and returns its result.
 */
export async function call(d: Deps, principal: Principal, ref: string, name: string, tool: string, args: Record<string, unknown>) {
  const access = member(d, principal, ref);
  const s = serverOr404(d, access.project.id, name);
  const cur = current(d, s);
  if (!cur || s.serving_version === null) throw conflict(`MCP server ${name} has no running version yet (state ${s.state}${s.message ? `: ${s.message.slice(0, 300)}` : ''})`);
  const known = manifestTools(cur).map((t) => t.name);
  if (known.length && !known.includes(tool)) throw notFound(`tool ${tool} not found in version ${cur.version} of MCP server ${name} (tools: ${known.join(', ')})`);
  const started = Date.now();
  const lease = await d.rt.lease(s);
  try {
    const answer = await callInstance(lease.port, lease.headers, bearerOf(d.ctx.db, s), { method: 'tools/call', params: { name: tool, arguments: args } }, d.ctx.config.mcpRequestTimeoutSeconds, `MCP server ${name}`);
    if (answer.error) {
      if (answer.error.code === -32602 && /unknown tool|not found/i.test(answer.error.message)) throw notFound(`tool ${tool} not found on MCP server ${name}: ${answer.error.message}`);
      throw new ApiError(502, `MCP server ${name} answered tools/call with an error: ${answer.error.message}`);
    }
    const r = (answer.result ?? {}) as { content?: Record<string, unknown>[]; structuredContent?: unknown; isError?: boolean };
    return {
      server: name,
      tool,
      version: s.serving_version ?? cur.version,
      content: Array.isArray(r.content) ? r.content : [],
      ...(r.structuredContent !== undefined ? { structuredContent: r.structuredContent } : {}),
      isError: r.isError === true,
      duration_ms: Date.now() - started,
    };
  } finally {
    lease.release();
  }
}
