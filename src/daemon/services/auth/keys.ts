import type { KeyView } from '../../../api/auth.js';
import type { Clock } from '../../clock.js';
import { newId } from '../../ids.js';
import type { Db } from '../../store/db.js';
import { mintKey } from './api-keys.js';
import { insertKey, type KeyRow } from './store.js';

/** Key view of spec 1 §2.8; state is derived from the clock (live, expired, revoked). */
export function keyView(row: KeyRow, clock: Clock): KeyView {
  const state = row.revoked_at ? 'revoked' : row.expires_at && Date.parse(row.expires_at) <= clock.now() ? 'expired' : 'live';
  return {
    id: row.id,
    key_id: row.key_id,
    display_name: row.display_name,
    kind: row.kind === 'service_account' ? 'service_account' : 'personal',
    created_at: row.created_at,
    ...(row.expires_at ? { expires_at: row.expires_at } : {}),
    ...(row.last_used_at ? { last_used_at: row.last_used_at } : {}),
    ...(row.revoked_at ? { revoked_at: row.revoked_at } : {}),
    state,
    live: state === 'live',
  };
}

/** Creates a personal or service-account key; returns the one-time secret and the stored row. */
export function createKey(
  db: Db,
  clock: Clock,
  owner: { kind: 'personal'; userId: string } | { kind: 'service_account'; serviceAccountId: string; projectId: string },
  displayName: string,
  expiresInDays?: number,
  /** The break-glass grant the key is minted under: the key expires with it (issue 17). */
  underGrant?: { id: string; expiresAt: string },
): { row: KeyRow; secret: string } {
  const minted = mintKey(owner.kind);
  const now = clock.now();
  const createdAt = new Date(now).toISOString();
  const asked = expiresInDays ? now + expiresInDays * 86_400_000 : Infinity;
  const until = underGrant ? Math.min(asked, Date.parse(underGrant.expiresAt)) : asked;
  const expiresAt = Number.isFinite(until) ? new Date(until).toISOString() : undefined;
  const id = newId();
  insertKey(db, {
    id,
    keyId: minted.keyId,
    hash: minted.hash,
    kind: owner.kind,
    userId: owner.kind === 'personal' ? owner.userId : undefined,
    serviceAccountId: owner.kind === 'service_account' ? owner.serviceAccountId : undefined,
    projectId: owner.kind === 'service_account' ? owner.projectId : undefined,
    displayName,
    createdAt,
    expiresAt,
    breakGlassGrantId: underGrant?.id,
  });
  const row = db.prepare('SELECT * FROM acct_api_keys WHERE id = ?').get(id) as KeyRow;
  return { row, secret: minted.full };
}

/** Mints the `svc_wl_` key injected into a workload; used by the agents area. */
export function createWorkloadKey(db: Db, clock: Clock, projectId: string, workload: string): string {
  const minted = mintKey('workload');
  insertKey(db, {
    id: newId(),
    keyId: minted.keyId,
    hash: minted.hash,
    kind: 'workload',
    projectId,
    workload,
    displayName: `workload ${workload}`,
    createdAt: new Date(clock.now()).toISOString(),
  });
  return minted.full;
}

/** Revokes every workload key of a workload (on delete or key rotation). */
export function revokeWorkloadKeys(db: Db, clock: Clock, projectId: string, workload: string): void {
  db.prepare(`UPDATE acct_api_keys SET revoked_at = ? WHERE kind = 'workload' AND project_id = ? AND workload = ? AND revoked_at IS NULL`).run(
    new Date(clock.now()).toISOString(),
    projectId,
    workload,
  );
}
