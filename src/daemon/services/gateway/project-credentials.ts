import type { AreaContext } from '../../area.js';
import { isoNow } from '../../clock.js';
import { openText, sealText } from '../../crypto/sealed.js';
import { lowerAlnum, newId } from '../../ids.js';
import type { ProjectAccess } from '../accounts/access.js';
import { createKey } from '../auth/keys.js';
import { insertServiceAccount, softDeleteServiceAccount } from '../service-accounts/store.js';
import type { EndpointRow } from './store.js';

/**
 * The credential a vectordb or pubsub endpoint calls the project's own API with
 * (docs/decisions/gateway.md, "Project API targets"): the endpoint's auth replaces the platform
 * token at the edge, and the gateway then calls as a service account of the project with the
 * member role, created with the endpoint and listed among the project's service accounts (so an
 * admin sees and can cut it). Its key is sealed under the master key, bound to the endpoint; it
 * is opened only in memory to call, never logged, never stored in clear.
 */
export interface ProjectCredentials {
  /** The sealed credential the row should hold for its target ('' when its target needs none). */
  provision(access: ProjectAccess, e: EndpointRow): string;
  /** Retires the endpoint's service account (its keys stop working). */
  release(e: EndpointRow): void;
  /** The bearer to call the project API with, opened from the row. */
  bearer(e: EndpointRow): string;
}

const aad = (endpointId: string) => `gateway:credential:${endpointId}`;
const needsCredential = (e: EndpointRow) => e.target_kind === 'vectordb' || e.target_kind === 'pubsub';
const accountName = (e: EndpointRow) => `gw-${e.name.slice(0, 40)}-${lowerAlnum(4)}`.replace(/-+/g, '-');

export function projectCredentials(ctx: AreaContext): ProjectCredentials {
  const opened = new Map<string, string>();
  const accountOf = new Map<string, string>();
  const findAccount = (e: EndpointRow) =>
    (ctx.db.prepare(`SELECT id FROM acct_service_accounts WHERE project_id = ? AND display_name = ? AND deleted_at IS NULL`).get(e.project_id, `gateway endpoint ${e.id}`) as { id: string } | undefined)?.id;
  const release = (e: EndpointRow) => {
    const id = accountOf.get(e.id) ?? findAccount(e);
    if (id) softDeleteServiceAccount(ctx.db, id, isoNow(ctx.clock));
    accountOf.delete(e.id);
    opened.delete(e.id);
  };
  return {
    provision(access, e) {
      if (!needsCredential(e)) {
        if (e.credential_sealed) release(e);
        return '';
      }
      if (e.credential_sealed) return e.credential_sealed;
      const saId = newId();
      insertServiceAccount(ctx.db, {
        id: saId,
        projectId: access.project.id,
        name: accountName(e),
        displayName: `gateway endpoint ${e.id}`,
        role: 'member',
        createdAt: isoNow(ctx.clock),
        grantId: newId(),
        grantedBy: 'gateway',
      });
      accountOf.set(e.id, saId);
      const { secret } = createKey(ctx.db, ctx.clock, { kind: 'service_account', serviceAccountId: saId, projectId: access.project.id }, `gateway endpoint ${e.name}`);
      return sealText(ctx.db, secret, aad(e.id));
    },
    release,
    bearer(e) {
      let b = opened.get(e.id);
      if (!b) opened.set(e.id, (b = openText(ctx.db, e.credential_sealed, aad(e.id))));
      return b;
    },
  };
}
