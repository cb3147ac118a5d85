import type { z } from 'zod';
import type { projectRoutes } from '../../../api/projects.js';
import type { AreaContext } from '../../area.js';
import { writeAudit } from '../../audit.js';
import { isoNow } from '../../clock.js';
import { badRequest, conflict, forbidden } from '../../http/errors.js';
import { newId, newShort } from '../../ids.js';
import { tx } from '../../store/db.js';
import type { PersonPrincipal } from '../auth/principal.js';
import { userById } from '../auth/store.js';
import { projectAccess } from './access.js';
import { insertMemberRow } from './members-store.js';
import { orgById } from './orgs-store.js';
import { accessProject, projectView } from './projects.js';
import { deleteProject, insertProject, projectById, projectBySlug, renameProject, shortTaken } from './projects-store.js';
import { orgAdminOf } from './users-store.js';
import { isUuid } from './validate-ids.js';

/** Creating, renaming and deleting project objects (spec 1 §4.5): the metadata axis. */

type CreateBody = z.output<NonNullable<(typeof projectRoutes.create)['body']>>;
type UpdateBody = z.output<NonNullable<(typeof projectRoutes.update)['body']>>;

const DEFAULT_SLUG = 'default';

/**
 * Creates a project in the target organization (default: the caller's home org). Org admins get
 * admin by inheritance, so no row is written for them; a platform admin is made a direct admin
 * only inside their own org (outside it they keep metadata authority and the note says so).
 */
export function createProject(ctx: AreaContext, caller: PersonPrincipal, body: CreateBody, requestId: string) {
  const { db, clock } = ctx;
  return tx(db, () => {
    const me = userById(db, caller.userId)!;
    if (body.org_id !== undefined && (!isUuid(body.org_id) || !orgById(db, body.org_id))) {
      throw badRequest('invalid field org_id: must be the UUID of an existing organization');
    }
    const orgId = body.org_id ?? me.org_id;
    if (!orgId) throw forbidden('you have no home organization: pass org_id of an organization you administer');
    const platformAdmin = caller.platformRole === 'admin';
    const orgAdmin = orgAdminOf(db, caller.userId, orgId);
    if (!platformAdmin && !orgAdmin) throw forbidden('creating a project requires the admin role on its organization');
    if (body.slug === DEFAULT_SLUG) throw conflict('slug default is reserved for the default project');
    if (projectBySlug(db, body.slug)) throw conflict(`a project with slug ${body.slug} already exists`);
    let short = newShort();
    while (shortTaken(db, short)) short = newShort();
    const id = newId();
    const now = isoNow(clock);
    insertProject(db, { id, orgId, slug: body.slug, name: body.name ?? body.slug, short, createdAt: now });
    let note: string | undefined;
    if (orgAdmin) {
      note = 'you have admin on this project through your org admin role';
    } else if (orgId === me.org_id) {
      insertMemberRow(db, { projectId: id, userId: caller.userId, role: 'admin', createdAt: now });
      note = 'you were made admin of the project';
    } else {
      note = 'created outside your own organization: you were not made a member; you keep metadata authority as platform admin';
    }
    writeAudit(db, clock, { projectId: id, actor: caller.email, action: 'project.create', target: body.slug, requestId, details: { org_id: orgId, short } });
    const project = projectView(projectAccess(db, clock, caller, projectById(db, id)!));
    return { project, note };
  });
}

/** Renames slug and/or display name; `short` never changes, so addresses survive a rename. */
export function updateProject(ctx: AreaContext, caller: PersonPrincipal, ref: string, body: UpdateBody, requestId: string) {
  const { db, clock } = ctx;
  return tx(db, () => {
    const access = accessProject(ctx, caller, ref, 'metadata-admin');
    const p = access.project;
    const slug = body.slug ?? p.slug;
    const name = body.name ?? p.name;
    if (slug === p.slug && name === p.name) return { project: projectView(access), note: 'nothing changed' };
    if (slug !== p.slug) {
      // The default project keeps its slug: local contexts and scripts address it as "default".
      if (p.is_default || slug === DEFAULT_SLUG) throw conflict('slug default is reserved for the default project');
      if (projectBySlug(db, slug)) throw conflict(`a project with slug ${slug} already exists`);
    }
    renameProject(db, p.id, slug, name);
    writeAudit(db, clock, {
      projectId: p.id,
      actor: caller.email,
      action: 'project.update',
      target: slug,
      requestId,
      details: { from: { slug: p.slug, name: p.name }, to: { slug, name } },
    });
    const changed = [slug !== p.slug ? `slug ${p.slug} → ${slug}` : '', name !== p.name ? `name → ${name}` : ''].filter(Boolean).join(', ');
    return {
      project: projectView(projectAccess(db, clock, caller, projectById(db, p.id)!)),
      note: `updated ${changed}; short ${p.short} and addresses are unchanged`,
    };
  });
}

/** Deletes a project when no area reports dependents (agents and the like) through the hooks. */
export function removeProject(ctx: AreaContext, caller: PersonPrincipal, ref: string, requestId: string) {
  const { db, clock } = ctx;
  return tx(db, () => {
    const access = accessProject(ctx, caller, ref, 'metadata-admin');
    const p = access.project;
    if (p.is_default) throw forbidden('the default project cannot be deleted');
    const dependents = ctx.hooks.projectDependents.map((h) => h(p.id)).filter((x): x is string => Boolean(x));
    if (dependents.length) throw conflict(`project ${p.slug} still has ${dependents.join(', ')}: delete them first`);
    const view = projectView(access);
    deleteProject(db, p.id);
    writeAudit(db, clock, { projectId: p.id, actor: caller.email, action: 'project.delete', target: p.slug, requestId });
    return { deleted: true as const, project: view };
  });
}
