import { RESERVED_SECRET_NAME, VAULT_MOUNT, type SecretView } from '../../../api/secrets.js';
import type { PageQuery } from '../../../api/common.js';
import { writeAudit } from '../../audit.js';
import { isoNow } from '../../clock.js';
import { ApiError, conflict, notFound } from '../../http/errors.js';
import { Reply } from '../../http/router.js';
import { tx } from '../../store/db.js';
import type { Principal } from '../auth/principal.js';
import { accessProject } from '../accounts/projects.js';
import { open, seal, valueAad } from './crypto.js';
import { guardStore, type Deps } from './deps.js';
import * as store from './store.js';

export const secretNotFound = (name: string) => notFound(`secret ${name} not found`);

/** The reserved credential is invisible on every secrets route: same 404 as an absent secret. */
export function visibleName(name: string): string {
  if (name === RESERVED_SECRET_NAME) throw secretNotFound(name);
  return name;
}

/** Where a project's values live in the Vault-compatible read API, below /v1/. */
export const pathPrefix = (projectShort: string) => `${VAULT_MOUNT}/data/${projectShort}/`;

const view = (r: store.SecretRow) => ({ name: r.name, current_version: r.current_version, created_at: r.created_at, updated_at: r.updated_at });
const versionView = (v: store.VersionRow) => ({ version: v.version, created_at: v.created_at, destroyed: v.destroyed_at !== null });

/** GET secrets: metadata of live secrets, never values; 503 when the store is not usable. */
export function list(d: Deps, principal: Principal, ref: string, query: PageQuery) {
  const access = accessProject(d.ctx, principal, ref, 'member');
  d.key.require();
  const page = d.ctx.pager.parse(query, `secrets:${access.project.id}`);
  const rows = guardStore(d, 'list', () => store.listSecrets(d.ctx.db, access.project.id, RESERVED_SECRET_NAME, page.size + 1, page.offset));
  const { items, next_page_token } = d.ctx.pager.slice(page, rows);
  return { secrets: items.map(view), path_prefix: pathPrefix(access.project.short), ...(next_page_token ? { next_page_token } : {}) };
}

/** POST secrets: stores a new sealed version; 201 for a first version, 200 for a rotation. */
export function write(d: Deps, principal: Principal, ref: string, body: { name: string; value: string }, requestId: string) {
  const access = accessProject(d.ctx, principal, ref, 'member');
  const name = visibleName(body.name);
  const key = d.key.require();
  const projectId = access.project.id;
  const r = guardStore(d, 'write', () =>
    tx(d.ctx.db, () => {
      const out = store.addVersion(d.ctx.db, projectId, name, (v) => seal(key, Buffer.from(body.value, 'utf8'), valueAad(projectId, name, v)), isoNow(d.ctx.clock));
      writeAudit(d.ctx.db, d.ctx.clock, { projectId, actor: principal.email, action: 'project.secret.write', target: name, details: { version: out.version, created: out.created }, requestId });
      return out;
    }),
  );
  const note = r.created
    ? `stored version ${r.version}; bind it with PUT .../agents/{agent}/secret-maps/{ENV}`
    : `stored version ${r.version}; bindings that track the newest version pick it up on the next apply or deploy`;
  return new Reply(r.created ? 201 : 200, { name, version: r.version, created: r.created, note });
}

function liveOr404(d: Deps, projectId: string, name: string): store.SecretRow {
  const row = store.liveSecret(d.ctx.db, projectId, name);
  if (!row) throw secretNotFound(name);
  return row;
}

/** GET one secret: metadata, versions and the bindings that point at it (absent when none). */
export function get(d: Deps, principal: Principal, ref: string, rawName: string): SecretView {
  const access = accessProject(d.ctx, principal, ref, 'member');
  const name = visibleName(rawName);
  d.key.require();
  return guardStore(d, 'get', () => {
    const row = liveOr404(d, access.project.id, name);
    const uses = store.bindingsForSecret(d.ctx.db, access.project.id, name).map((b) => ({
      id: b.id,
      agent_id: b.agent_id,
      agent_slug: b.agent,
      env_name: b.env_name,
      ...(b.version !== null ? { version: b.version } : {}),
      created_at: b.created_at,
      updated_at: b.updated_at,
    }));
    return { ...view(row), versions: store.versions(d.ctx.db, access.project.id, name).map(versionView), ...(uses.length ? { used_by: uses } : {}) };
  });
}

export function versions(d: Deps, principal: Principal, ref: string, rawName: string) {
  const access = accessProject(d.ctx, principal, ref, 'member');
  const name = visibleName(rawName);
  d.key.require();
  return guardStore(d, 'versions', () => {
    const row = liveOr404(d, access.project.id, name);
    return { name, current_version: row.current_version, versions: store.versions(d.ctx.db, access.project.id, name).map(versionView) };
  });
}

/** DELETE (project admin): destroys every version; 409 naming the bindings while any exist. */
export function remove(d: Deps, principal: Principal, ref: string, rawName: string, requestId: string) {
  const access = accessProject(d.ctx, principal, ref, 'resource-admin');
  const name = visibleName(rawName);
  d.key.require();
  const projectId = access.project.id;
  guardStore(d, 'delete', () =>
    tx(d.ctx.db, () => {
      const row = liveOr404(d, projectId, name);
      const bound = store.bindingsForSecret(d.ctx.db, projectId, name);
      if (bound.length) {
        const names = bound.map((b) => `${b.agent}/${b.env_name}`).join(', ');
        throw conflict(`secret ${name} is still bound (${names}); unbind it first`, {
          bindings: bound.map((b) => ({ agent: b.agent, env_name: b.env_name })),
        });
      }
      store.destroySecret(d.ctx.db, projectId, name, isoNow(d.ctx.clock));
      writeAudit(d.ctx.db, d.ctx.clock, { projectId, actor: principal.email, action: 'project.secret.delete', target: name, details: { versions_destroyed: row.current_version }, requestId });
    }),
  );
  return { name, deleted: true, note: 'every version was destroyed; this cannot be undone' };
}

/** A stored value, or an ApiError saying why it cannot be read (absent, destroyed, unreadable). */
export function readValue(d: Deps, key: Buffer, projectId: string, name: string, wanted?: number): { version: number; value: string; created_at: string } {
  const row = liveOr404(d, projectId, name);
  const v = wanted || row.current_version;
  const ver = store.version(d.ctx.db, projectId, name, v);
  if (!ver) throw notFound(`version ${v} of secret ${name} not found`);
  if (!ver.ciphertext) throw notFound(`version ${v} of secret ${name} was destroyed`);
  let value: string;
  try {
    value = open(key, ver.ciphertext, valueAad(projectId, name, v)).toString('utf8');
  } catch {
    throw new ApiError(500, `version ${v} of secret ${name} cannot be decrypted: the stored ciphertext failed its integrity check`);
  }
  return { version: v, value, created_at: ver.created_at };
}

/**
 * Reveal (project admin). Fail-closed: the audit row is written in the same transaction as the
 * read and the value leaves only after the commit, so no audit row means no value (503).
 */
export function reveal(d: Deps, principal: Principal, ref: string, rawName: string, body: { version?: number; reason?: string }, requestId: string) {
  const access = accessProject(d.ctx, principal, ref, 'resource-admin');
  const name = visibleName(rawName);
  const key = d.key.require();
  const projectId = access.project.id;
  const out = guardStore(d, 'reveal', () =>
    tx(d.ctx.db, () => {
      const r = readValue(d, key, projectId, name, body.version);
      try {
        writeAudit(d.ctx.db, d.ctx.clock, { projectId, actor: principal.email, action: 'project.secret.reveal', target: name, details: { version: r.version, reason: body.reason ?? '' }, requestId });
      } catch (e) {
        d.ctx.log.error('reveal refused: audit write failed', { request_id: requestId, error: (e as Error).message });
        throw new ApiError(503, 'reveal refused: the audit row could not be written, so no value is returned');
      }
      return r;
    }),
  );
  return { name, version: out.version, value: out.value, note: 'this reveal was recorded in the project audit log' };
}
