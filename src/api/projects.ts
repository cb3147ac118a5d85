import { z } from 'zod';
import { route } from './contract.js';
import { PageQuery, Role, Timestamp, Uuid, printable } from './common.js';
import { Slug } from './orgs.js';
import { lazySchema } from './lazy.js';

/** Project view of spec 1 §2.3. */
export const ProjectView = lazySchema(() => z.object({
  id: Uuid,
  org_id: Uuid,
  slug: z.string(),
  name: z.string(),
  short: z.string(),
  created_at: Timestamp,
  your_role: Role.optional(),
  your_metadata_role: Role.optional(),
}));
export type ProjectView = z.infer<typeof ProjectView>;

export const ProjectParams = lazySchema(() => z.object({ projectID: z.string() }));

const ProjectName = lazySchema(() => printable(z.string().trim().min(1).max(200)));

/** One quota row of GET /v1/projects/{id}/quota: the cap written at creation and live use. */
export const QuotaRow = lazySchema(() => z.object({
  resource: z.string(),
  unit: z.string(),
  limit: z.number().describe('0 means unlimited'),
  used: z.number(),
  /** Where `used` comes from: the area that reported it, or "none" while nothing runs there. */
  source: z.string(),
  /** `used` per source, so a reader sees what runs where (`agents 2, cache 1`). */
  by_source: z.record(z.string(), z.number()),
}));

export const ProjectQuota = lazySchema(() => z.object({ project_id: Uuid, project_slug: z.string(), quotas: z.array(QuotaRow) }));

/** Platform-wide limits of spec 1 §8, as numbers a client can act on. */
export const PlatformLimits = lazySchema(() => z.object({
  bodies: z.record(z.string(), z.number()),
  paging: z.object({ page_size_default: z.number(), page_size_max: z.number(), agent_log_lines_default: z.number() }),
  names: z.record(z.string(), z.string()),
  password: z.object({ min_length: z.number(), min_classes: z.number() }),
  quota_defaults: z.array(z.object({ resource: z.string(), unit: z.string(), limit: z.number() })),
  instance_sizes: z.array(z.object({ name: z.string(), cpu: z.string(), memory: z.string(), default: z.boolean() })),
  timeouts: z.record(z.string(), z.number()),
  credentials: z.record(z.string(), z.number()),
}));

export const projectRoutes = {
  list: route({
    id: 'projects.list',
    method: 'GET',
    path: '/v1/projects',
    summary: 'List the projects you can see, sorted by slug',
    auth: 'person',
    query: PageQuery,
    status: 200,
    response: lazySchema(() => z.object({ projects: z.array(ProjectView), next_page_token: z.string().optional() })),
  }),
  create: route({
    id: 'projects.create',
    method: 'POST',
    path: '/v1/projects',
    summary: 'Create a project (org admin of the target organization, or platform admin)',
    auth: 'person',
    body: lazySchema(() => z.strictObject({ slug: Slug, name: ProjectName.optional(), org_id: z.string().optional() })),
    status: 201,
    response: lazySchema(() => z.object({ project: ProjectView, warning: z.string().optional(), note: z.string().optional() })),
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
  update: route({
    id: 'projects.update',
    method: 'PATCH',
    path: '/v1/projects/{projectID}',
    summary: 'Rename a project (slug and/or display name); short never changes',
    auth: 'person',
    params: ProjectParams,
    body: lazySchema(() => z.strictObject({ slug: Slug.optional(), name: ProjectName.optional() })),
    status: 200,
    response: lazySchema(() => z.object({ project: ProjectView, note: z.string() })),
  }),
  delete: route({
    id: 'projects.delete',
    method: 'DELETE',
    path: '/v1/projects/{projectID}',
    summary: 'Delete a project that holds no agents',
    auth: 'person',
    params: ProjectParams,
    status: 200,
    response: lazySchema(() => z.object({ deleted: z.literal(true), project: ProjectView })),
  }),
  quota: route({
    id: 'projects.quota',
    method: 'GET',
    path: '/v1/projects/{projectID}/quota',
    summary: "A project's quota caps and live use",
    auth: 'any',
    params: ProjectParams,
    status: 200,
    response: ProjectQuota,
  }),
  limits: route({
    id: 'platform.limits',
    method: 'GET',
    path: '/v1/platform/limits',
    summary: 'Platform-wide limits: body caps, paging, names, quota defaults, instance sizes, timeouts',
    auth: 'any',
    status: 200,
    response: PlatformLimits,
  }),
};
