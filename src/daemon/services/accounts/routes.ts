import { projectRoutes } from '../../../api/projects.js';
import type { Area } from '../../area.js';
import { accountMigrations } from './migrations.js';
import { accessProject, listProjects, projectView } from './projects.js';

/** Users, organizations, projects, members, invitations, service accounts, audit (spec 1 §4.3–4.11). */
export const accountsArea: Area = {
  name: 'accounts',
  migrations: accountMigrations,
  register(r, ctx) {
    r.handle(projectRoutes.list, ({ principal, query }) => listProjects(ctx, principal!, query));
    r.handle(projectRoutes.get, ({ principal, params }) => projectView(accessProject(ctx, principal!, params.projectID, 'visible')));
  },
};
