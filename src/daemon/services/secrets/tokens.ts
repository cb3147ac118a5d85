import { createHash } from 'node:crypto';
import { TOKEN_TTL_DEFAULT, TOKEN_TTL_MAX, VAULT_PREFIX } from '../../../api/secrets.js';
import { writeAudit } from '../../audit.js';
import { isoNow } from '../../clock.js';
import { randomString } from '../../ids.js';
import { tx } from '../../store/db.js';
import type { Principal } from '../auth/principal.js';
import { requireProjectAccess } from '../accounts/access.js';
import { accessProject } from '../accounts/projects.js';
import { guardStore, type Deps } from './deps.js';
import { pathPrefix, secretNotFound, visibleName } from './service.js';
import * as store from './store.js';

/** Read tokens are opaque; only their SHA-256 is stored, like API keys. */
export const TOKEN_PREFIX = 'pst_';
export const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');
/** Vault's accessor names a token without being it: derived from the stored hash, not the token. */
export const accessorOf = (hash: string) => createHash('sha256').update(`accessor:${hash}`).digest('hex').slice(0, 24);

/** ttl_seconds: default 300, silently clamped to 3600 (spec 2 §4.1, §8). */
export const effectiveTtl = (asked?: number) => Math.min(asked ?? TOKEN_TTL_DEFAULT, TOKEN_TTL_MAX);

/**
 * Mints a read token for one secret (`name`) or for the whole project. The project-wide route is
 * the single route a workload key may call, for its own project; on the name-scoped route a
 * workload key gets 404, as if the secret did not exist for it.
 */
export function issueToken(
  d: Deps,
  principal: Principal,
  ref: string,
  rawName: string | undefined,
  body: { ttl_seconds?: number },
  baseUrl: string,
  requestId: string,
) {
  const access = accessProject(d.ctx, principal, ref, 'visible');
  if (rawName !== undefined && access.workload) throw secretNotFound(rawName);
  if (!access.workload) requireProjectAccess(access, 'member');
  const name = rawName === undefined ? undefined : visibleName(rawName);
  d.key.require();
  const projectId = access.project.id;
  const ttl = effectiveTtl(body.ttl_seconds);
  const token = TOKEN_PREFIX + randomString(43);
  guardStore(d, 'issue-token', () =>
    tx(d.ctx.db, () => {
      if (name !== undefined && !store.liveSecret(d.ctx.db, projectId, name)) throw secretNotFound(name);
      const now = d.ctx.clock.now();
      store.insertToken(
        d.ctx.db,
        { hash: hashToken(token), project_id: projectId, secret_name: name ?? null, expires_at: now + ttl * 1000, created_at: isoNow(d.ctx.clock), actor: principal.email },
        now,
      );
      writeAudit(d.ctx.db, d.ctx.clock, {
        projectId,
        actor: principal.email,
        action: 'project.secret.issue-token',
        target: name ?? '*',
        details: { scope: name ? 'secret' : 'project', ttl_seconds: ttl },
        requestId,
      });
    }),
  );
  const prefix = pathPrefix(access.project.short);
  return {
    token,
    ttl_seconds: ttl,
    read: { addr: baseUrl + VAULT_PREFIX, path: name ? prefix + name : prefix },
    note: name
      ? `reads only ${name}: GET {addr}/v1/{path} with header X-Vault-Token (Vault KV v2); expires in ${ttl}s`
      : `reads every secret of the project: GET {addr}/v1/{path}<name> with header X-Vault-Token (Vault KV v2); expires in ${ttl}s`,
  };
}

/** Scope of a live token, or undefined when unknown or expired. */
export function lookupToken(d: Deps, token: string): store.TokenRow | undefined {
  if (!token.startsWith(TOKEN_PREFIX)) return undefined;
  const row = store.tokenByHash(d.ctx.db, hashToken(token));
  return row && row.expires_at > d.ctx.clock.now() ? row : undefined;
}
