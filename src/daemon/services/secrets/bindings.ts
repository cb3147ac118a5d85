import { ENV_NAME_RE, RESERVED_ENV_NAMES, RESERVED_SECRET_NAME, type Binding } from '../../../api/secrets.js';
import type { PageQuery } from '../../../api/common.js';
import type { AgentSecretsHook } from '../../area.js';
import { writeAudit } from '../../audit.js';
import { isoNow } from '../../clock.js';
import { ApiError, badRequest, notFound } from '../../http/errors.js';
import { newId } from '../../ids.js';
import { tx } from '../../store/db.js';
import type { Principal } from '../auth/principal.js';
import { accessProject } from '../accounts/projects.js';
import { guardStore, type Deps } from './deps.js';
import { readValue } from './service.js';
import * as store from './store.js';

const RESERVED_ENV = new Set<string>(RESERVED_ENV_NAMES);

export function bindingView(b: store.BindingRow): Binding {
  return {
    id: b.id,
    agent_id: b.agent_id,
    agent: b.agent,
    env_name: b.env_name,
    secret_name: b.secret_name,
    ...(b.version !== null ? { version: b.version } : {}),
    pinned_to: b.version === null ? 'latest' : String(b.version),
    created_at: b.created_at,
    updated_at: b.updated_at,
  };
}

/** The agents area answers whether an agent exists; without it no agent exists. */
const agentsHook = (d: Deps): AgentSecretsHook | undefined => d.ctx.hooks.agentSecrets;

function requireAgent(d: Deps, projectId: string, agent: string): { id: string } {
  const found = agentsHook(d)?.find(projectId, agent);
  if (!found) throw notFound(`agent ${agent} not found`);
  return found;
}

export function listAll(d: Deps, principal: Principal, ref: string, query: PageQuery) {
  const access = accessProject(d.ctx, principal, ref, 'member');
  const page = d.ctx.pager.parse(query, `secret-maps:${access.project.id}`);
  const { items, next_page_token } = d.ctx.pager.slice(page, store.listBindings(d.ctx.db, access.project.id, page.size + 1, page.offset));
  return { bindings: items.map(bindingView), ...(next_page_token ? { next_page_token } : {}) };
}

export function listAgent(d: Deps, principal: Principal, ref: string, agent: string) {
  const access = accessProject(d.ctx, principal, ref, 'member');
  const rows = store.bindingsForAgent(d.ctx.db, access.project.id, agent);
  // Rows of an agent deleted since stay listed so they can be unbound; otherwise the agent must exist.
  if (!rows.length) requireAgent(d, access.project.id, agent);
  return { agent, bindings: rows.map(bindingView) };
}

/** PUT: the four checks of spec 2 §4.1 in order, each a 400, then create or repoint the binding. */
export function put(d: Deps, principal: Principal, ref: string, agent: string, envName: string, body: { secret_name: string; version?: number | null }, requestId: string) {
  const access = accessProject(d.ctx, principal, ref, 'member');
  const projectId = access.project.id;
  const found = requireAgent(d, projectId, agent);
  if (!ENV_NAME_RE.test(envName)) throw badRequest(`invalid environment variable name ${envName}: must match ^[A-Za-z_][A-Za-z0-9_]*$`);
  if (RESERVED_ENV.has(envName)) throw badRequest(`environment variable name ${envName} is reserved by the platform`);
  d.key.require();
  const pinned = body.version ?? null;
  const row = guardStore(d, 'bind', () =>
    tx(d.ctx.db, () => {
      const secret = body.secret_name === RESERVED_SECRET_NAME ? undefined : store.liveSecret(d.ctx.db, projectId, body.secret_name);
      if (!secret) throw badRequest(`secret ${body.secret_name} does not exist`);
      if (pinned !== null) {
        const v = store.version(d.ctx.db, projectId, body.secret_name, pinned);
        if (!v) throw badRequest(`version ${pinned} of secret ${body.secret_name} does not exist`);
        if (v.destroyed_at) throw badRequest(`version ${pinned} of secret ${body.secret_name} was destroyed`);
      }
      const now = isoNow(d.ctx.clock);
      const saved = store.upsertBinding(d.ctx.db, {
        id: newId(), project_id: projectId, agent_id: found.id, agent, env_name: envName, secret_name: body.secret_name, version: pinned, created_at: now, updated_at: now,
      });
      writeAudit(d.ctx.db, d.ctx.clock, { projectId, actor: principal.email, action: 'project.secret.bind', target: `${agent}/${envName}`, details: { secret_name: body.secret_name, pinned_to: pinned ?? 'latest' }, requestId });
      return saved;
    }),
  );
  return { binding: bindingView(row), note: 'the value reaches the agent on the next apply (POST .../secret-maps:apply) or deploy' };
}

/**
 * DELETE: immediate revocation. Removes the row, removes the key from the agent's stored
 * environment and rolls a revision, all in one transaction. Needs no value, so it works while
 * the store is sealed.
 */
export async function unbind(d: Deps, principal: Principal, ref: string, agent: string, envName: string, requestId: string) {
  const access = accessProject(d.ctx, principal, ref, 'member');
  const projectId = access.project.id;
  const result = tx(d.ctx.db, () => {
    const row = store.binding(d.ctx.db, projectId, agent, envName);
    if (!row) throw notFound(`no binding of ${envName} on agent ${agent}`);
    store.deleteBinding(d.ctx.db, row.id);
    const live = agentsHook(d)?.find(projectId, agent);
    const applied = live ? agentsHook(d)!.applySecretEnv(projectId, live.id, { set: {}, remove: [envName] }) : { revisionRolled: false };
    const why = live ? 'the agent has no built revision yet' : 'the agent no longer exists';
    writeAudit(d.ctx.db, d.ctx.clock, { projectId, actor: principal.email, action: 'project.secret.unbind', target: `${agent}/${envName}`, details: { secret_name: row.secret_name, revision_rolled: applied.revisionRolled }, requestId });
    return { ...applied, why };
  });
  await result.afterCommit?.();
  return {
    agent,
    env_name: envName,
    deleted: true,
    revoked: true,
    revision_rolled: result.revisionRolled,
    note: result.revisionRolled ? `${envName} was removed from the agent and a new revision rolled` : `${envName} was unbound and removed from the agent's stored environment; ${result.why}, so there was no revision to roll`,
  };
}

interface ApplyRow {
  env_name: string;
  secret_name: string;
  version?: number;
  applied: boolean;
  error?: string;
}

/** Reads every bound value of an agent; rows that fail carry their error. */
function readBound(d: Deps, key: Buffer, projectId: string, rows: store.BindingRow[]): { results: ApplyRow[]; values: Record<string, string> } {
  const values: Record<string, string> = {};
  const results = rows.map((b): ApplyRow => {
    try {
      const v = readValue(d, key, projectId, b.secret_name, b.version ?? undefined);
      values[b.env_name] = v.value;
      return { env_name: b.env_name, secret_name: b.secret_name, version: v.version, applied: true };
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      return { env_name: b.env_name, secret_name: b.secret_name, ...(b.version !== null ? { version: b.version } : {}), applied: false, error: e.message };
    }
  });
  return { results, values };
}

/**
 * POST :apply: reads every bound value (pinned versions as pinned, the others at the newest
 * version) and writes them into the agent's environment all or nothing. When any value cannot
 * be read, 424 with the per-row results and nothing is written.
 */
export async function apply(d: Deps, principal: Principal, ref: string, agent: string, requestId: string) {
  const access = accessProject(d.ctx, principal, ref, 'member');
  const projectId = access.project.id;
  const found = requireAgent(d, projectId, agent);
  const key = d.key.require();
  const out = guardStore(d, 'apply', () =>
    tx(d.ctx.db, () => {
      const rows = store.bindingsForAgent(d.ctx.db, projectId, agent);
      const { results, values } = readBound(d, key, projectId, rows);
      const failed = results.filter((r) => !r.applied);
      if (failed.length) {
        throw new ApiError(424, `apply failed: ${failed.length} of ${results.length} bound values could not be read (${failed.map((f) => f.env_name).join(', ')}); nothing was written`, {}, {
          agent,
          applied: results.map((r) => (r.applied ? { ...r, applied: false } : r)),
          revision_rolled: false,
        });
      }
      const written = rows.length ? agentsHook(d)!.applySecretEnv(projectId, found.id, { set: values, remove: [] }) : { revisionRolled: false };
      writeAudit(d.ctx.db, d.ctx.clock, { projectId, actor: principal.email, action: 'project.secret.apply', target: agent, details: { applied: results.map((r) => ({ env_name: r.env_name, secret_name: r.secret_name, version: r.version })), revision_rolled: written.revisionRolled }, requestId });
      return { results, written };
    }),
  );
  await out.written.afterCommit?.();
  return {
    agent,
    applied: out.results,
    revision_rolled: out.written.revisionRolled,
    note: !out.results.length
      ? 'the agent has no bindings; nothing to apply'
      : `${out.results.length} bound values written; ${out.written.revisionRolled ? 'a new revision rolled' : 'the agent has no built revision yet, so its first deploy takes them'}`,
  };
}

/** Bound values for a deploy (registered as hooks.boundSecretEnv); 503 while the store is not usable. */
export function boundEnv(d: Deps, projectId: string, agent: string): Record<string, string> {
  return guardStore(d, 'deploy', () => {
    const rows = store.bindingsForAgent(d.ctx.db, projectId, agent);
    if (!rows.length) return {};
    const key = d.key.require();
    const { results, values } = readBound(d, key, projectId, rows);
    const failed = results.filter((r) => !r.applied);
    if (failed.length) throw new ApiError(424, `bound secrets could not be read: ${failed.map((f) => `${f.env_name} (${f.error})`).join('; ')}`);
    return values;
  });
}

/**
 * The newest value of a project secret for a serverless revision's env_from (registered as
 * hooks.projectSecretValue): undefined when the secret does not exist (or is the reserved one);
 * an ApiError (503, 500) when the store cannot give it.
 */
export function currentValue(d: Deps, projectId: string, name: string): string | undefined {
  if (name === RESERVED_SECRET_NAME) return undefined;
  return guardStore(d, 'env_from', () => {
    if (!store.liveSecret(d.ctx.db, projectId, name)) return undefined;
    return readValue(d, d.key.require(), projectId, name).value;
  });
}
