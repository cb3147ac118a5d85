import { AGENT_NAME_RE, AgentConfig, FRAMEWORKS, RUNTIMES, type AgentView, type Framework } from '../../../api/agents.js';
import type { PageQuery } from '../../../api/common.js';
import type { AreaContext } from '../../area.js';
import { writeAudit } from '../../audit.js';
import { isoNow } from '../../clock.js';
import { ApiError, badRequest, conflict, notFound } from '../../http/errors.js';
import { describeIssue } from '../../http/validate.js';
import { newId } from '../../ids.js';
import { tx } from '../../store/db.js';
import { revokeWorkloadKeys } from '../auth/keys.js';
import type { Principal } from '../auth/principal.js';
import { projectAccess, type ProjectRow } from '../accounts/access.js';
import { ownedAgent, requireOwner, resolveProject } from './access.js';
import { applySetRemove, checkEnvNames, checkKeys, checkSetRemove } from './env-rules.js';
import type { AgentRuntime } from './lifecycle.js';
import { rollRevision } from './revisions.js';
import { nameTaken } from '../../names-in-use.js';
import { servicesRefusal } from '../accounts/quota-use.js';
import { agentStore, type AgentRow, type BuildRow } from './store.js';
import { safeRelativePath, type SourceFile } from './unpack.js';
import { agentView, revisionView } from './view.js';
import { servedTraffic } from './traffic.js';

export interface Deps {
  ctx: AreaContext;
  rt: AgentRuntime;
}

const shortOf = (d: Deps, projectId: string) => (d.ctx.db.prepare('SELECT short FROM acct_projects WHERE id = ?').get(projectId) as { short: string }).short;
export const view = (d: Deps, row: AgentRow): AgentView => agentView(d.ctx.config, row, shortOf(d, row.project_id));

export interface DeployForm {
  name?: string;
  framework?: string;
  runtime?: string;
  config?: string;
}

/** Validates the deploy form (spec 1 §4.12 400s) before anything is read from the archive. */
export function checkDeployForm(form: DeployForm): { name: string; framework: Framework; runtime?: string; config: AgentConfig } {
  if (!form.name) throw badRequest('missing required field: name');
  if (!AGENT_NAME_RE.test(form.name)) throw badRequest(`invalid name ${form.name}: must be a lowercase DNS label (^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$)`);
  const framework = (form.framework || 'adk') as Framework;
  if (!FRAMEWORKS.includes(framework)) throw badRequest(`unsupported framework ${form.framework}: must be one of ${FRAMEWORKS.join(', ')}`);
  if (form.runtime && framework !== 'function') throw badRequest(`runtime is for functions only; framework ${framework} does not take runtime ${form.runtime}`);
  const runtime = framework === 'function' ? form.runtime || 'python' : undefined;
  if (runtime && !(RUNTIMES as readonly string[]).includes(runtime)) throw badRequest(`unsupported runtime ${runtime}: must be one of ${RUNTIMES.join(', ')}`);
  let config: AgentConfig = {};
  if (form.config) {
    let raw: unknown;
    try {
      raw = JSON.parse(form.config);
    } catch (e) {
      throw badRequest(`invalid config: ${(e as Error).message}`);
    }
    const parsed = AgentConfig.safeParse(raw);
    if (!parsed.success) throw badRequest(`invalid config: ${describeIssue(parsed.error.issues[0]!, 'config')}`);
    config = parsed.data;
  }
  return { name: form.name, framework, runtime, config };
}

/**
 * A deploy or redeploy may start unless a build is already in progress; a running claim older
 * than the stale window is taken over (spec 1 §4.12). Call inside tx.
 */
function claimBuildSlot(d: Deps, agent: AgentRow): string | undefined {
  const active = agentStore.activeBuild(d.ctx.db, agent.id);
  if (!active) return undefined;
  const stale = active.state === 'running' && active.claimed_at && d.ctx.clock.now() - Date.parse(active.claimed_at) > d.ctx.config.workloads.staleClaimMs;
  if (!stale) throw conflict(`a build is already in progress for agent ${agent.name} (build ${active.id}, ${active.state})`);
  agentStore.finishBuild(d.ctx.db, active.id, 'superseded', 'superseded by a newer deploy after its claim went stale', isoNow(d.ctx.clock));
  return active.id;
}

/** Service quota at deploy time: a new name needs a free Services entry (spec 1 §8.3), whichever area holds the others. */
function checkServiceQuota(d: Deps, projectId: string): void {
  const refusal = servicesRefusal(d.ctx, projectId, 1);
  if (refusal) throw conflict(`${refusal}; delete an agent, a function or a serverless service to deploy another`);
}

/** Agents and serverless services share the project's public names (<name>-<short>.apps…). */
function checkNameFree(d: Deps, projectId: string, name: string): void {
  const taken = nameTaken(d.ctx, projectId, name);
  if (taken) throw conflict(`${name} is already the name of ${taken} in this project, and both would answer at the same address; choose another name`);
}

function newBuild(d: Deps, agentId: string, reason: BuildRow['reason']): string {
  const id = newId();
  agentStore.insertBuild(d.ctx.db, { id, agent_id: agentId, reason, state: 'queued', queued_at: isoNow(d.ctx.clock), claimed_at: null, finished_at: null, output: '' });
  return id;
}

/** The deploy's project and ownership checks, run before the archive is read. */
export function precheckDeploy(d: Deps, principal: Principal, name: string, projectRef: string | undefined): void {
  const access = resolveProject(d.ctx, principal, projectRef);
  // Workloads read their bound secrets from the project store (Document 2): without it nothing is built.
  if (d.ctx.config.secretsStore === 'off') throw new ApiError(503, 'the project secret store is not configured (PLATFORM_SECRETS_STORE=off); nothing was built');
  const existing = agentStore.byName(d.ctx.db, access.project.id, name);
  if (existing) requireOwner(access, principal, existing, name);
  else {
    checkNameFree(d, access.project.id, name);
    checkServiceQuota(d, access.project.id);
  }
}

/** POST /v1/agents: create or redeploy by name from an uploaded archive (spec 1 §3, §4.12). */
export function deploy(
  d: Deps,
  principal: Principal,
  projectRef: string | undefined,
  form: ReturnType<typeof checkDeployForm>,
  files: SourceFile[],
  requestId: string,
): { agent: AgentView; build_id: string } {
  const { db, clock } = d.ctx;
  const access = resolveProject(d.ctx, principal, projectRef);
  const projectId = access.project.id;
  let superseded: string | undefined;
  const result = tx(db, () => {
    const now = isoNow(clock);
    let agent = agentStore.byName(db, projectId, form.name);
    if (agent) {
      agent = requireOwner(access, principal, agent, form.name);
      if (agent.kind === 'function' && form.framework !== 'function') throw conflict(`${form.name} is a function; deploy it with framework function`);
      if (agent.kind === 'agent' && form.framework === 'function') throw conflict(`${form.name} is an agent; a function cannot take an agent's name`);
      superseded = claimBuildSlot(d, agent);
      agentStore.update(db, agent.id, { framework: form.framework, runtime: form.runtime ?? null, state: 'building', message: '', config: JSON.stringify(form.config) }, now);
    } else {
      checkNameFree(d, projectId, form.name);
      checkServiceQuota(d, projectId);
      agent = {
        id: newId(),
        project_id: projectId,
        name: form.name,
        kind: form.framework === 'function' ? 'function' : 'agent',
        framework: form.framework,
        runtime: form.runtime ?? null,
        owner: principal.email,
        state: 'building',
        message: '',
        image: null,
        latest_revision: null,
        config: JSON.stringify(form.config),
        workload_key: null,
        created_at: now,
        updated_at: now,
      };
      agentStore.insert(db, agent);
    }
    agentStore.replaceFiles(db, agent.id, files, now);
    const buildId = newBuild(d, agent.id, 'deploy');
    writeAudit(db, clock, { projectId, actor: principal.email, action: 'agent.deploy', target: form.name, details: { build_id: buildId, files: files.length }, requestId });
    return { agent: view(d, agentStore.byId(db, agent.id)!), build_id: buildId };
  });
  if (superseded) d.rt.abortBuild(superseded);
  d.rt.enqueue(result.build_id);
  return result;
}

/** POST /v1/agents/{name}/redeploy: rebuild from the stored source with the recorded runtime. */
export function redeploy(d: Deps, principal: Principal, name: string, projectRef: string | undefined, requestId: string) {
  const { db, clock } = d.ctx;
  const { access, agent } = ownedAgent(d.ctx, principal, name, projectRef);
  let superseded: string | undefined;
  const result = tx(db, () => {
    const files = agentStore.fileCount(db, agent.id);
    if (!files) throw badRequest(`agent ${name} has no stored source to rebuild from; deploy an archive first`);
    superseded = claimBuildSlot(d, agent);
    agentStore.update(db, agent.id, { state: 'building', message: '' }, isoNow(clock));
    const buildId = newBuild(d, agent.id, 'redeploy');
    writeAudit(db, clock, { projectId: access.project.id, actor: principal.email, action: 'agent.redeploy', target: name, details: { build_id: buildId }, requestId });
    return {
      agent: view(d, agentStore.byId(db, agent.id)!),
      build_id: buildId,
      files,
      note: `rebuilding ${name} from ${files} stored file${files === 1 ? '' : 's'}${agent.runtime ? ` with its recorded runtime ${agent.runtime}` : ''}`,
    };
  });
  if (superseded) d.rt.abortBuild(superseded);
  d.rt.enqueue(result.build_id);
  return result;
}

/** DELETE: removes the agent, stops every instance (freeing its ports) and revokes its workload key. */
export async function remove(d: Deps, principal: Principal, name: string, projectRef: string | undefined, requestId: string) {
  const { db, clock } = d.ctx;
  const { access, agent } = ownedAgent(d.ctx, principal, name, projectRef);
  const before = view(d, agent);
  const artifacts = d.rt.artifacts(agent.id);
  tx(db, () => {
    agentStore.remove(db, agent.id);
    revokeWorkloadKeys(db, clock, agent.project_id, agent.name);
    writeAudit(db, clock, { projectId: access.project.id, actor: principal.email, action: 'agent.delete', target: name, requestId });
  });
  await d.rt.removeAgent(agent.id, artifacts);
  return { agent: before, deleted: true as const };
}

/** GET /v1/agents: plain members see their own agents, admins all, across visible projects. */
export function list(d: Deps, principal: Principal, query: PageQuery & { project?: string }) {
  const { db, clock } = d.ctx;
  let scopes: { project: ProjectRow; admin: boolean }[];
  if (query.project || principal.kind !== 'user') {
    const a = resolveProject(d.ctx, principal, query.project);
    scopes = [{ project: a.project, admin: a.resource === 'admin' }];
  } else {
    const rows = db.prepare('SELECT * FROM acct_projects ORDER BY slug').all() as ProjectRow[];
    scopes = rows
      .map((p) => projectAccess(db, clock, principal, p))
      .filter((a) => a.resource)
      .map((a) => ({ project: a.project, admin: a.resource === 'admin' }));
  }
  const listKey = `agents:${query.project ? scopes[0]!.project.id : 'all'}:${principal.email}`;
  const page = d.ctx.pager.parse(query, listKey);
  const admins = scopes.filter((s) => s.admin).map((s) => s.project.id);
  const members = scopes.filter((s) => !s.admin).map((s) => s.project.id);
  // Admin projects show everything, member projects the caller's own; merged in one ordering.
  const rows = [
    ...agentStore.list(db, admins, undefined, 1_000_000, 0),
    ...agentStore.list(db, members, principal.email, 1_000_000, 0),
  ].sort((a, b) => (a.name === b.name ? a.id.localeCompare(b.id) : a.name < b.name ? -1 : 1));
  const { items, next_page_token } = d.ctx.pager.slice(page, rows.slice(page.offset, page.offset + page.size + 1));
  return { agents: items.map((r) => view(d, r)), next_page_token: next_page_token ?? '' };
}

export function get(d: Deps, principal: Principal, name: string, projectRef?: string): AgentView {
  return view(d, ownedAgent(d.ctx, principal, name, projectRef).agent);
}

export function revisions(d: Deps, principal: Principal, name: string, query: PageQuery & { project?: string }) {
  const { agent } = ownedAgent(d.ctx, principal, name, query.project);
  const page = d.ctx.pager.parse(query, `agent-revisions:${agent.id}`);
  const rows = agentStore.revisions(d.ctx.db, agent.id, page.size + 1, page.offset);
  const { items, next_page_token } = d.ctx.pager.slice(page, rows);
  const shares = new Map(servedTraffic(agent).map((t) => [t.revision_name, t.percent]));
  return { agent: name, revisions: items.map((r) => revisionView(name, r, shares)), next_page_token: next_page_token ?? '' };
}

/**
 * Which build a build-log request means (the route added in docs/decisions/agents.md): ?build=
 * (an id), ?revision= (a name or its number: a settings revision shows the build of its
 * artifact), else the agent's newest build.
 */
export function buildOf(d: Deps, principal: Principal, name: string, query: { project?: string; revision?: string; build?: string }): BuildRow {
  const { agent } = ownedAgent(d.ctx, principal, name, query.project);
  const { db } = d.ctx;
  if (query.build && query.revision) throw badRequest('give revision or build, not both');
  let build: BuildRow | undefined;
  if (query.build) {
    build = agentStore.build(db, query.build);
    if (build?.agent_id !== agent.id) throw notFound(`no build ${query.build} for agent ${name}`);
  } else if (query.revision) {
    const rev = /^\d+$/.test(query.revision) ? agentStore.revisionBySeq(db, agent.id, Number(query.revision)) : agentStore.revisionByName(db, agent.id, query.revision);
    if (!rev) throw notFound(`no revision ${query.revision} for agent ${name}`);
    build = agentStore.build(db, rev.build_id);
    if (!build) throw notFound(`the build of revision ${rev.name} is no longer kept`);
  } else {
    build = agentStore.latestBuild(db, agent.id);
    if (!build) throw notFound(`agent ${name} has no build yet`);
  }
  return build;
}

/**
 * Rolls a settings revision (secrets, env) on the newest built artifact and replaces the running
 * instance, so the next request serves the new settings. Before the first build there is no
 * artifact: the build itself snapshots the settings then.
 */
export function rollSettings(d: Deps, agent: AgentRow, reason: 'secrets' | 'env' | 'config'): boolean {
  const now = agentStore.byId(d.ctx.db, agent.id)!;
  // On the artifact that serves (a failed build's artifact never does), else the newest.
  const base = now.serving_revision ? agentStore.revisionByName(d.ctx.db, agent.id, now.serving_revision) : agentStore.latestRevision(d.ctx.db, agent.id);
  if (!base?.artifact) return false;
  rollRevision(d.ctx, now, reason, base.build_id, base.image, base.artifact);
  return true;
}

export function secretsGet(d: Deps, principal: Principal, name: string, projectRef?: string) {
  const { agent } = ownedAgent(d.ctx, principal, name, projectRef);
  return { agent: name, keys: agentStore.kvKeys(d.ctx.db, 'agents_secrets', agent.id) };
}

export async function secretsPut(d: Deps, principal: Principal, name: string, projectRef: string | undefined, body: Record<string, string>, requestId: string) {
  const { agent, access } = ownedAgent(d.ctx, principal, name, projectRef);
  checkKeys(Object.keys(body));
  const next = Object.fromEntries(Object.entries(body).filter(([, v]) => v !== ''));
  const rolled = tx(d.ctx.db, () => {
    agentStore.replaceKv(d.ctx.db, 'agents_secrets', agent.id, next);
    writeAudit(d.ctx.db, d.ctx.clock, { projectId: access.project.id, actor: principal.email, action: 'agent.secrets.replace', target: name, details: { keys: Object.keys(next) }, requestId });
    return rollSettings(d, agent, 'secrets');
  });
  if (rolled) await d.rt.recycle(agent.id, 'secrets changed');
  return { agent: name, secrets_updated: Object.keys(next).length };
}

export async function secretsPatch(d: Deps, principal: Principal, name: string, projectRef: string | undefined, body: { set?: Record<string, string>; remove?: string[] }, requestId: string) {
  const { agent, access } = ownedAgent(d.ctx, principal, name, projectRef);
  checkSetRemove(body);
  const { next, changed, rolled } = tx(d.ctx.db, () => {
    const r = applySetRemove(agentStore.kv(d.ctx.db, 'agents_secrets', agent.id), body);
    agentStore.replaceKv(d.ctx.db, 'agents_secrets', agent.id, r.next);
    writeAudit(d.ctx.db, d.ctx.clock, { projectId: access.project.id, actor: principal.email, action: 'agent.secrets.patch', target: name, details: { set: Object.keys(body.set ?? {}), remove: body.remove ?? [] }, requestId });
    return { ...r, rolled: rollSettings(d, agent, 'secrets') };
  });
  if (rolled) await d.rt.recycle(agent.id, 'secrets changed');
  return { agent: name, secrets_updated: changed, keys: Object.keys(next).sort() };
}

export function envGet(d: Deps, principal: Principal, name: string, projectRef?: string) {
  const { agent } = ownedAgent(d.ctx, principal, name, projectRef);
  return { agent: name, env: agentStore.kv(d.ctx.db, 'agents_env', agent.id) };
}

export async function envPatch(d: Deps, principal: Principal, name: string, projectRef: string | undefined, body: { set?: Record<string, string>; remove?: string[] }, requestId: string) {
  const { agent, access } = ownedAgent(d.ctx, principal, name, projectRef);
  checkSetRemove(body);
  checkEnvNames([...Object.keys(body.set ?? {}), ...(body.remove ?? [])]);
  const { next, changed, rolled } = tx(d.ctx.db, () => {
    const r = applySetRemove(agentStore.kv(d.ctx.db, 'agents_env', agent.id), body);
    agentStore.replaceKv(d.ctx.db, 'agents_env', agent.id, r.next);
    writeAudit(d.ctx.db, d.ctx.clock, { projectId: access.project.id, actor: principal.email, action: 'agent.env.patch', target: name, details: { set: Object.keys(body.set ?? {}), remove: body.remove ?? [] }, requestId });
    return { ...r, rolled: rollSettings(d, agent, 'env') };
  });
  if (rolled) await d.rt.recycle(agent.id, 'env changed');
  return { agent: name, env_updated: changed, env: next };
}

export function configGet(d: Deps, principal: Principal, name: string, projectRef?: string) {
  const { agent } = ownedAgent(d.ctx, principal, name, projectRef);
  return { agent: name, config: JSON.parse(agent.config) as AgentConfig };
}

/**
 * PATCH config (spec 1 §4.12, §9; its body is "not shown": the deploy form's config shape, merged
 * key by key as Cloud Run's service update does). A change rolls a revision and replaces the
 * running instance; an unchanged document rolls nothing.
 */
export async function configPatch(d: Deps, principal: Principal, name: string, projectRef: string | undefined, body: AgentConfig, requestId: string) {
  const { agent, access } = ownedAgent(d.ctx, principal, name, projectRef);
  const keys = Object.keys(body) as (keyof AgentConfig)[];
  if (!keys.length) throw badRequest('empty config: send at least one of timeout_seconds, response_start_seconds, instance_size, description');
  const { db, clock } = d.ctx;
  const { config, changed, rolled } = tx(db, () => {
    const current = agentStore.byId(db, agent.id)!;
    const before = JSON.parse(current.config) as AgentConfig;
    const next: AgentConfig = { ...before, ...body };
    const changed = keys.filter((k) => before[k] !== body[k]).length;
    if (!changed) return { config: next, changed, rolled: false };
    agentStore.update(db, agent.id, { config: JSON.stringify(next) }, isoNow(clock));
    writeAudit(db, clock, { projectId: access.project.id, actor: principal.email, action: 'agent.config.patch', target: name, details: { set: keys }, requestId });
    return { config: next, changed, rolled: rollSettings(d, agentStore.byId(db, agent.id)!, 'config') };
  });
  if (rolled) await d.rt.recycle(agent.id, 'config changed');
  const latest = agentStore.byId(db, agent.id)?.latest_revision ?? undefined;
  return { agent: name, config, config_updated: changed, ...(latest ? { latest_revision: latest } : {}) };
}

export function filesList(d: Deps, principal: Principal, name: string, projectRef?: string) {
  const { agent } = ownedAgent(d.ctx, principal, name, projectRef);
  return {
    agent: name,
    agent_id: agent.id,
    files: agentStore.fileInfos(d.ctx.db, agent.id),
    editable: true,
    note: 'latest version only; edits take effect on the next redeploy (POST /v1/agents/{name}/redeploy)',
  };
}

function filePath(raw: string): string {
  const p = safeRelativePath(raw);
  if (typeof p !== 'string') throw badRequest(`invalid file path: ${p.refused}`);
  return p;
}

export function fileGet(d: Deps, principal: Principal, name: string, path: string, projectRef?: string) {
  const { agent } = ownedAgent(d.ctx, principal, name, projectRef);
  const f = agentStore.file(d.ctx.db, agent.id, filePath(path));
  if (!f) throw notFound(`no file ${path} in agent ${name}`);
  return { path: f.path, content: f.content.toString('utf8'), updated_at: f.updated_at };
}

export function filePut(d: Deps, principal: Principal, name: string, path: string, projectRef: string | undefined, content: string, requestId: string) {
  const { agent, access } = ownedAgent(d.ctx, principal, name, projectRef);
  const p = filePath(path);
  const bytes = Buffer.from(content, 'utf8');
  const limits = { file: 1024 * 1024, files: 200 };
  if (bytes.length > limits.file) throw badRequest(`file ${p} is ${bytes.length} bytes; the limit is ${limits.file} bytes per file`);
  return tx(d.ctx.db, () => {
    if (!agentStore.file(d.ctx.db, agent.id, p) && agentStore.fileCount(d.ctx.db, agent.id) >= limits.files) {
      throw badRequest(`agent ${name} already holds ${limits.files} files, the limit`);
    }
    const now = isoNow(d.ctx.clock);
    agentStore.putFile(d.ctx.db, agent.id, p, bytes, now);
    writeAudit(d.ctx.db, d.ctx.clock, { projectId: access.project.id, actor: principal.email, action: 'agent.file.put', target: `${name}/${p}`, requestId });
    return { path: p, size: bytes.length, updated_at: now };
  });
}

export function fileDelete(d: Deps, principal: Principal, name: string, path: string, projectRef: string | undefined, requestId: string) {
  const { agent, access } = ownedAgent(d.ctx, principal, name, projectRef);
  const p = filePath(path);
  return tx(d.ctx.db, () => {
    if (!agentStore.deleteFile(d.ctx.db, agent.id, p)) throw notFound(`no file ${path} in agent ${name}`);
    writeAudit(d.ctx.db, d.ctx.clock, { projectId: access.project.id, actor: principal.email, action: 'agent.file.delete', target: `${name}/${p}`, requestId });
    return { path: p, deleted: true as const };
  });
}

/** GET logs/history (spec 1 §4.12): limit defaults to 500; an unparseable since is ignored. */
export function logHistory(d: Deps, principal: Principal, name: string, query: { project?: string; limit?: string; since?: string }) {
  const { agent } = ownedAgent(d.ctx, principal, name, query.project);
  let limit = 500;
  if (query.limit !== undefined) {
    limit = /^\d+$/.test(query.limit) ? Number(query.limit) : NaN;
    if (!(limit >= 1 && limit <= 10_000)) throw badRequest('limit must be between 1 and 10000');
  }
  const sinceMs = query.since ? Date.parse(query.since) : NaN;
  const since = Number.isFinite(sinceMs) ? new Date(sinceMs).toISOString() : undefined;
  d.rt.flushLogs();
  // Lines past retention are never shown, whether or not the chunked sweep reached them yet.
  const kept = new Date(d.ctx.clock.now() - d.ctx.config.workloads.logRetentionMs).toISOString();
  const lines = agentStore.logHistory(d.ctx.db, agent.id, limit, since && since > kept ? since : kept);
  const notes = [`newest ${limit} lines at most, oldest first; kept ${Math.round(d.ctx.config.workloads.logRetentionMs / 86_400_000)} days`];
  if (query.since && !since) notes.push(`since ${JSON.stringify(query.since)} is not RFC 3339 and was ignored`);
  return { agent: name, lines, count: lines.length, note: notes.join('; ') };
}

