import type { z } from 'zod';
import type { BreakGlassBody } from '../../../api/members.js';
import type { AreaContext } from '../../area.js';
import { writeAudit } from '../../audit.js';
import { badRequest, forbidden } from '../../http/errors.js';
import { tx } from '../../store/db.js';
import type { PersonPrincipal } from '../auth/principal.js';
import { projectAccess } from './access.js';
import { insertMemberRow, memberById } from './members-store.js';
import { memberView } from './members.js';
import { accessProject } from './projects.js';

export const BREAK_GLASS_MAX_MINUTES = 1440;
export const BREAK_GLASS_MIN_REASON = 12;

/**
 * Break-glass (spec 1 §4.7): the only route by which a platform admin reaches project contents.
 * The grant is a member row with an expiry; access.ts ignores it once the clock passes expires_at,
 * so it ends on its own without a background job, and the row stays listed as history.
 */
export function breakGlass(ctx: AreaContext, caller: PersonPrincipal, ref: string, body: z.output<typeof BreakGlassBody>, requestId: string) {
  const { db, clock } = ctx;
  const reason = body.reason.trim();
  if (reason.length < BREAK_GLASS_MIN_REASON) {
    throw badRequest(`reason must be at least ${BREAK_GLASS_MIN_REASON} characters: it is shown verbatim to the project's members`);
  }
  if (body.minutes > BREAK_GLASS_MAX_MINUTES) throw badRequest(`duration over 24 hours: minutes must be at most ${BREAK_GLASS_MAX_MINUTES}`);
  return tx(db, () => {
    const { project } = accessProject(ctx, caller, ref, 'visible');
    const current = projectAccess(db, clock, caller, project);
    if (current.resource) {
      throw forbidden(
        current.via === 'break-glass'
          ? 'you already hold a break-glass grant on this project; end it (DELETE on your member row) before asking again'
          : 'you already hold a grant on this project; break-glass is only for projects you cannot otherwise reach',
      );
    }
    if (current.metadata !== 'admin') throw forbidden('break-glass requires metadata authority to escalate from');
    const now = clock.now();
    const expiresAt = new Date(now + body.minutes * 60_000).toISOString();
    const id = insertMemberRow(db, {
      projectId: project.id,
      userId: caller.userId,
      role: body.role,
      createdAt: new Date(now).toISOString(),
      breakGlass: { expiresAt, reason, grantedBy: caller.email },
    });
    writeAudit(db, clock, {
      projectId: project.id,
      actor: caller.email,
      action: 'break_glass.grant',
      target: caller.email,
      requestId,
      details: { role: body.role, minutes: body.minutes, expires_at: expiresAt, reason },
    });
    return {
      grant: memberView(memberById(db, id)!, now),
      note: `break-glass ${body.role} on ${project.slug} until ${expiresAt}; the grant and its reason are visible to the project's members and recorded in the audit log`,
    };
  });
}
