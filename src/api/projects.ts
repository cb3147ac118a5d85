import { z } from 'zod';
import { route } from './contract.js';
import { PageQuery, Role, Timestamp, Uuid } from './common.js';

/** Project view of spec 1 §2.3. */
export const ProjectView = z.object({
  id: Uuid,
  org_id: Uuid,
  slug: z.string(),
  name: z.string(),
  short: z.string(),
  created_at: Timestamp,
  your_role: Role.optional(),
  your_metadata_role: Role.optional(),
});
export type ProjectView = z.infer<typeof ProjectView>;

export const ProjectParams = z.object({ projectID: z.string() });

export const projectRoutes = {
  list: route({
    id: 'projects.list',
    method: 'GET',
    path: '/v1/projects',
    summary: 'List the projects you can see, sorted by slug',
    auth: 'person',
    query: PageQuery,
    status: 200,
    response: z.object({ projects: z.array(ProjectView), next_page_token: z.string().optional() }),
  }),
  get: route({
    id: 'projects.get',
    method: 'GET',
    path: '/v1/projects/{projectID}',
    summary: 'One project',
    auth: 'any',
    params: ProjectParams,
    status: 200,
    response: ProjectView,
  }),
};
