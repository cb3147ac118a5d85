import type { z } from 'zod';
import type { AcceptedInvitation, CreateInvitationResponse, InvitationPreview, InvitationView } from '../../../api/invitations.js';
import type { PageQuery } from '../../../api/common.js';
import type { AreaContext } from '../../area.js';
import { writeAudit } from '../../audit.js';
import { isoNow } from '../../clock.js';
import { anchorPage, parseAnchored } from '../../http/anchored-paging.js';
import { badRequest, conflict, gone, notFound } from '../../http/errors.js';
import { newId, randomString } from '../../ids.js';
import { tx } from '../../store/db.js';
import { accessProject } from '../accounts/projects.js';
import { refuseSelfGrant } from '../accounts/access.js';
import { personProjectAccess, refuseWorkload } from '../auth/machine-guard.js';
import { hashSecret } from '../auth/api-keys.js';
import { hashPassword, passwordProblem } from '../auth/passwords.js';
import type { Principal } from '../auth/principal.js';
import { SignIn } from '../auth/service.js';
import {
  accountByEmail,
  insertExternalUser,
  insertInvitation,
  insertUserGrant,
  invitationById,
  invitationByTokenHash,
  invitationPage,
  markAccepted,
  markRevoked,
  memberGrant,
  newestInvitationRowid,
  openInvitationsFor,
  type InvitationRow,
} from './store.js';

/** Invitations expire after 7 days, like GitHub's organization invitations (recorded in docs/decisions). */
export const INVITATION_TTL_MS = 7 * 24 * 60 * 60 * 1000;
export const acceptUrl = (token: string) => `/invite/${token}`;

const LINK_NOT_VALID = 'invitation link not valid';
const ALREADY_MEMBER = 'already a member of this project';

/** State with expiry derived from the clock: an open invitation past expires_at is expired. */
function stateOf(row: InvitationRow, now: number): InvitationView['state'] {
  if (row.state === 'open' && Date.parse(row.expires_at) <= now) return 'expired';
  return row.state;
}

export function invitationView(row: InvitationRow, now: number): InvitationView {
  return {
    id: row.id,
    project_id: row.project_id,
    email: row.email,
    role: row.role,
    state: stateOf(row, now),
    ...(row.invited_by ? { invited_by: row.invited_by } : {}),
    created_at: row.created_at,
    expires_at: row.expires_at,
    ...(row.accepted_at ? { accepted_at: row.accepted_at } : {}),
    ...(row.revoked_at ? { revoked_at: row.revoked_at } : {}),
  };
}

export function listInvitations(ctx: AreaContext, principal: Principal, ref: string, query: PageQuery) {
  const { project } = accessProject(ctx, principal, ref, 'visible');
  refuseWorkload(principal);
  const prefix = `invitations:${project.id}`;
  const parsed = parseAnchored(ctx.pager, query, prefix);
  const anchor = parsed.anchor ?? newestInvitationRowid(ctx.db, project.id);
  const page = anchorPage(parsed.page, prefix, anchor);
  const rows = invitationPage(ctx.db, project.id, anchor, page.offset, page.size + 1);
  const { items, next_page_token } = ctx.pager.slice(page, rows);
  const now = ctx.clock.now();
  return { invitations: items.map((r) => invitationView(r, now)), ...(next_page_token ? { next_page_token } : {}) };
}

/**
 * POST invitations (metadata admin). An existing account is granted the role at once and no
 * invitation is made; otherwise an invitation with a one-time token, of which only a hash is kept.
 * A new invitation for an e-mail with an open one supersedes it (the old link stops working).
 */
export function createInvitation(
  ctx: AreaContext,
  principal: Principal,
  ref: string,
  body: { email: string; role: 'admin' | 'member' },
  requestId: string,
): z.infer<typeof CreateInvitationResponse> {
  const { db, clock } = ctx;
  const access = personProjectAccess(ctx, principal, ref, 'metadata-admin');
  const { project, person: p } = access;
  // An invitation to oneself would be a self-grant (at once, or when accepted).
  if (body.email.trim().toLowerCase() === p.email.toLowerCase()) refuseSelfGrant(access, p.userId, p.userId);
  return tx(db, () => {
    const now = clock.now();
    const at = new Date(now).toISOString();
    const account = accountByEmail(db, body.email);
    if (account) {
      refuseSelfGrant(access, p.userId, account.id);
      if (memberGrant(db, project.id, account.id)) throw conflict(ALREADY_MEMBER);
      insertUserGrant(db, { id: newId(), projectId: project.id, userId: account.id, role: body.role, grantedBy: p.email, createdAt: at });
      writeAudit(db, clock, {
        projectId: project.id,
        actor: p.email,
        action: 'member.add',
        target: account.email,
        details: { role: body.role, via: 'invitation' },
        requestId,
      });
      return {
        member: { user_id: account.id, email: account.email, role: body.role, kind: 'user', external: account.org_id === null, created_at: at },
        note: `${account.email} already has an account: the ${body.role} role was granted at once and no invitation was sent`,
      };
    }
    for (const old of openInvitationsFor(db, project.id, body.email)) {
      if (stateOf(old, now) !== 'open') continue;
      markRevoked(db, old.id, at, p.email);
      writeAudit(db, clock, { projectId: project.id, actor: p.email, action: 'invitation.revoke', target: old.email, details: { invitation_id: old.id, reason: 'superseded' }, requestId });
    }
    const token = `inv_${randomString(40)}`;
    const id = newId();
    insertInvitation(db, {
      id,
      projectId: project.id,
      email: body.email,
      role: body.role,
      tokenHash: hashSecret(token),
      invitedBy: p.email,
      createdAt: at,
      expiresAt: new Date(now + INVITATION_TTL_MS).toISOString(),
    });
    writeAudit(db, clock, { projectId: project.id, actor: p.email, action: 'invitation.create', target: body.email, details: { invitation_id: id, role: body.role }, requestId });
    const row = invitationById(db, project.id, id)!;
    return {
      invitation: { ...invitationView(row, now), token, accept_url: acceptUrl(token) },
      note: 'send the accept link to the invitee: the token is shown only once and cannot be retrieved later',
    };
  });
}

/** DELETE an invitation (metadata admin): open or expired becomes revoked; revoking twice is a no-op. */
export function revokeInvitation(ctx: AreaContext, principal: Principal, ref: string, invitationId: string, requestId: string) {
  const { db, clock } = ctx;
  const { project, person: p } = personProjectAccess(ctx, principal, ref, 'metadata-admin');
  return tx(db, () => {
    const row = invitationById(db, project.id, invitationId);
    if (!row) throw notFound('invitation not found');
    if (row.state === 'accepted') throw conflict('invitation already accepted: remove the member instead');
    const at = isoNow(clock);
    let note = 'the invitation link no longer works';
    if (row.state === 'revoked') note = 'the invitation was already revoked';
    else {
      markRevoked(db, row.id, at, p.email);
      writeAudit(db, clock, { projectId: project.id, actor: p.email, action: 'invitation.revoke', target: row.email, details: { invitation_id: row.id }, requestId });
    }
    return { revoked: row.id, invitation: invitationView(invitationById(db, project.id, row.id)!, clock.now()), note };
  });
}

/** Finds the invitation a token names, or the spec's 404 and 410 (spec 1 §4.8). */
function usableInvitation(ctx: AreaContext, token: string): InvitationRow {
  const row = invitationByTokenHash(ctx.db, hashSecret(token));
  if (!row) throw notFound(LINK_NOT_VALID);
  const state = stateOf(row, ctx.clock.now());
  if (state !== 'open') throw gone(`invitation ${state === 'accepted' ? 'already used' : state}`);
  return row;
}

/** GET /v1/invitations/{token}: what accepting would do; the token is the credential. */
export function previewInvitation(ctx: AreaContext, token: string): z.infer<typeof InvitationPreview> {
  const row = usableInvitation(ctx, token);
  const project = ctx.db.prepare('SELECT name, slug FROM acct_projects WHERE id = ?').get(row.project_id) as { name: string; slug: string };
  return {
    project_name: project.name,
    project_slug: project.slug,
    email: row.email,
    role: row.role,
    expires_at: row.expires_at,
    account_exists: Boolean(accountByEmail(ctx.db, row.email)),
  };
}

/**
 * POST /v1/invitations/accept (no credential, sign-in throttled). Without an account, the password
 * creates an external account (no home organization); with one, the role is granted and the
 * account's password is never touched.
 */
export async function acceptInvitation(
  ctx: AreaContext,
  body: { token: string; password?: string },
  ip: string,
  requestId: string,
): Promise<z.infer<typeof AcceptedInvitation>> {
  const { db, clock } = ctx;
  const first = usableInvitationThrottled(ctx, body.token, ip);
  let passwordHash: string | undefined;
  if (!accountByEmail(db, first.email)) {
    if (body.password === undefined || body.password === '') throw badRequest('password is required: no account exists for this e-mail yet, so accepting creates one');
    const problem = passwordProblem(body.password);
    if (problem) throw badRequest(problem);
    passwordHash = await hashPassword(body.password);
  }
  // Re-checked inside the transaction: another accept or a revoke may have landed during hashing.
  return tx(db, () => {
    const row = usableInvitation(ctx, body.token);
    const at = isoNow(clock);
    let account = accountByEmail(db, row.email);
    let created = false;
    if (!account) {
      if (!passwordHash) throw badRequest('password is required: no account exists for this e-mail yet, so accepting creates one');
      account = { id: newId(), email: row.email, org_id: null };
      insertExternalUser(db, { id: account.id, email: account.email, passwordHash, createdAt: at });
      writeAudit(db, clock, { projectId: row.project_id, actor: row.email, action: 'user.create', target: row.email, details: { external: true, via: 'invitation' }, requestId });
      created = true;
    } else if (memberGrant(db, row.project_id, account.id)) {
      throw conflict(ALREADY_MEMBER);
    }
    insertUserGrant(db, { id: newId(), projectId: row.project_id, userId: account.id, role: row.role, grantedBy: row.invited_by ?? row.email, createdAt: at });
    markAccepted(db, row.id, at);
    writeAudit(db, clock, { projectId: row.project_id, actor: row.email, action: 'invitation.accept', target: row.email, details: { invitation_id: row.id, role: row.role, account_created: created }, requestId });
    return {
      accepted: true as const,
      project_id: row.project_id,
      role: row.role,
      email: row.email,
      note: created
        ? 'account created: sign in with this e-mail and the password you chose'
        : 'the role was granted to your existing account; its password is unchanged',
    };
  });
}

/** Counts the attempt against the sign-in throttle (per IP, and per invited e-mail when known) first. */
function usableInvitationThrottled(ctx: AreaContext, token: string, ip: string): InvitationRow {
  const signIn = new SignIn(ctx);
  const row = invitationByTokenHash(ctx.db, hashSecret(token));
  signIn.throttle(ip, row?.email);
  return usableInvitation(ctx, token);
}
