import { memberRoutes } from '../../../api/members.js';
import { orgRoutes } from '../../../api/orgs.js';
import { projectRoutes } from '../../../api/projects.js';
import { userRoutes } from '../../../api/users.js';
import type { Area } from '../../area.js';
import { Reply } from '../../http/router.js';
import type { PersonPrincipal } from '../auth/principal.js';
import { breakGlass } from './break-glass.js';
import { platformLimits, projectQuota } from './limits.js';
import {
  addMember,
  listMembersPage,
  removeMember,
  removeServiceAccountMember,
  updateMember,
  updateServiceAccountMember,
} from './members.js';
import { accountMigrations } from './migrations.js';
import { addOrgMember, createOrg, listOrgMembersPage, listOrgsPage, removeOrg, removeOrgMember, updateOrgMember } from './orgs.js';
import { createProject, removeProject, updateProject } from './project-admin.js';
import { accessProject, listProjects, projectView } from './projects.js';
import { createUser, listUsersPage, removeUser, resetPassword, updateUser } from './users.js';

// Routes with auth 'person' or 'platform-admin' only ever see a person (the router's gate).
const person = (p: unknown) => p as PersonPrincipal;
const replied = (r: { status: number; body: unknown }) => new Reply(r.status, r.body);

/** Users, organizations, projects, members, invitations, service accounts, audit (spec 1 §4.3–4.11). */
export const accountsArea: Area = {
  name: 'accounts',
  migrations: accountMigrations,
  register(r, ctx) {
    r.handle(projectRoutes.list, ({ principal, query }) => listProjects(ctx, principal!, query));
    r.handle(projectRoutes.get, ({ principal, params }) => projectView(accessProject(ctx, principal!, params.projectID, 'visible')));
    r.handle(projectRoutes.create, ({ principal, body, requestId }) => createProject(ctx, person(principal), body, requestId));
    r.handle(projectRoutes.update, ({ principal, params, body, requestId }) =>
      updateProject(ctx, person(principal), params.projectID, body, requestId),
    );
    r.handle(projectRoutes.delete, ({ principal, params, requestId }) => removeProject(ctx, person(principal), params.projectID, requestId));
    r.handle(projectRoutes.quota, ({ principal, params }) => projectQuota(ctx, principal!, params.projectID));
    r.handle(projectRoutes.limits, ({ principal }) => platformLimits(ctx, principal!));

    r.handle(userRoutes.list, ({ principal, query }) => listUsersPage(ctx, person(principal), query));
    r.handle(userRoutes.create, ({ principal, body, requestId }) => createUser(ctx, person(principal), body, requestId));
    r.handle(userRoutes.update, ({ principal, params, body, requestId }) => updateUser(ctx, person(principal), params.email, body, requestId));
    r.handle(userRoutes.delete, ({ principal, params, requestId }) => removeUser(ctx, person(principal), params.email, requestId));
    r.handle(userRoutes.resetPassword, ({ principal, params, requestId }) => resetPassword(ctx, person(principal), params.email, requestId));

    r.handle(orgRoutes.list, ({ query }) => listOrgsPage(ctx, query));
    r.handle(orgRoutes.create, ({ principal, body, requestId }) => createOrg(ctx, person(principal), body, requestId));
    r.handle(orgRoutes.delete, ({ principal, params, requestId }) => removeOrg(ctx, person(principal), params.orgID, requestId));
    r.handle(orgRoutes.listMembers, ({ params, query }) => listOrgMembersPage(ctx, params.orgID, query));
    r.handle(orgRoutes.addMember, ({ principal, params, body, requestId }) =>
      replied(addOrgMember(ctx, person(principal), params.orgID, body, requestId)),
    );
    r.handle(orgRoutes.updateMember, ({ principal, params, body, requestId }) =>
      updateOrgMember(ctx, person(principal), params.orgID, params.userID, body.role, requestId),
    );
    r.handle(orgRoutes.removeMember, ({ principal, params, requestId }) =>
      removeOrgMember(ctx, person(principal), params.orgID, params.userID, requestId),
    );

    r.handle(memberRoutes.list, ({ principal, params, query }) => listMembersPage(ctx, principal!, params.projectID, query));
    r.handle(memberRoutes.add, ({ principal, params, body, requestId }) =>
      replied(addMember(ctx, person(principal), params.projectID, body, requestId)),
    );
    r.handle(memberRoutes.update, ({ principal, params, body, requestId }) =>
      updateMember(ctx, person(principal), params.projectID, params.userID, body.role, requestId),
    );
    r.handle(memberRoutes.remove, ({ principal, params, requestId }) =>
      removeMember(ctx, person(principal), params.projectID, params.userID, requestId),
    );
    r.handle(memberRoutes.updateServiceAccount, ({ principal, params, body, requestId }) =>
      updateServiceAccountMember(ctx, person(principal), params.projectID, params.saID, body.role, requestId),
    );
    r.handle(memberRoutes.removeServiceAccount, ({ principal, params, requestId }) =>
      removeServiceAccountMember(ctx, person(principal), params.projectID, params.saID, requestId),
    );
    r.handle(memberRoutes.breakGlass, ({ principal, params, body, requestId }) =>
      breakGlass(ctx, person(principal), params.projectID, body, requestId),
    );
  },
};
