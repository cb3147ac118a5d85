import { z } from 'zod';
import { route } from './contract.js';
import { Email, PageQuery, Role, Timestamp, Uuid, printable } from './common.js';
import { lazySchema } from './lazy.js';

/** Slugs of organizations and projects: a lowercase DNS label (they appear in hostnames). */
export const Slug = lazySchema(() => z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$/, 'must be a lowercase DNS label: letters, digits and hyphens, starting with a letter, at most 63 characters'));

/** Organization of spec 1 §2.5. */
export const OrgView = lazySchema(() => z.object({
  id: Uuid,
  slug: z.string(),
  name: z.string(),
  created_at: Timestamp,
  projects: z.number().int(),
  users: z.number().int(),
}));
export type OrgView = z.infer<typeof OrgView>;

/** Organization member of spec 1 §2.5. */
export const OrgMemberView = lazySchema(() => z.object({ user_id: Uuid, email: z.string(), role: Role, created_at: Timestamp }));
export type OrgMemberView = z.infer<typeof OrgMemberView>;

const OrgParams = lazySchema(() => z.object({ orgID: z.string() }));
const OrgMemberParams = lazySchema(() => z.object({ orgID: z.string(), userID: z.string() }));

export const orgRoutes = {
  list: route({
    id: 'orgs.list',
    method: 'GET',
    path: '/v1/orgs',
    summary: 'List organizations (platform admin)',
    auth: 'platform-admin',
    query: PageQuery,
    status: 200,
    response: lazySchema(() => z.object({ orgs: z.array(OrgView), next_page_token: z.string().optional() })),
  }),
  create: route({
    id: 'orgs.create',
    method: 'POST',
    path: '/v1/orgs',
    summary: 'Create an organization (platform admin)',
    auth: 'platform-admin',
    body: lazySchema(() => z.strictObject({ slug: Slug, name: printable(z.string().trim().min(1).max(200)).optional() })),
    status: 201,
    response: OrgView,
  }),
  delete: route({
    id: 'orgs.delete',
    method: 'DELETE',
    path: '/v1/orgs/{orgID}',
    summary: 'Delete an empty organization (platform admin)',
    auth: 'platform-admin',
    params: OrgParams,
    status: 200,
    response: lazySchema(() => z.object({ deleted: z.literal(true), org: OrgView })),
  }),
  listMembers: route({
    id: 'orgs.members.list',
    method: 'GET',
    path: '/v1/orgs/{orgID}/members',
    summary: 'List the members of an organization (platform admin)',
    auth: 'platform-admin',
    params: OrgParams,
    query: PageQuery,
    status: 200,
    response: lazySchema(() => z.object({ members: z.array(OrgMemberView), next_page_token: z.string().optional() })),
  }),
  addMember: route({
    id: 'orgs.members.add',
    method: 'POST',
    path: '/v1/orgs/{orgID}/members',
    summary: 'Add an existing account to an organization (platform admin)',
    auth: 'platform-admin',
    params: OrgParams,
    body: lazySchema(() => z.strictObject({ email: Email, role: Role.default('member') })),
    status: 201,
    response: lazySchema(() => z.object({ member: OrgMemberView, note: z.string().optional() })),
  }),
  updateMember: route({
    id: 'orgs.members.update',
    method: 'PATCH',
    path: '/v1/orgs/{orgID}/members/{userID}',
    summary: "Change an organization member's role (platform admin)",
    auth: 'platform-admin',
    params: OrgMemberParams,
    body: lazySchema(() => z.strictObject({ role: Role })),
    status: 200,
    response: lazySchema(() => z.object({ member: OrgMemberView, note: z.string() })),
  }),
  removeMember: route({
    id: 'orgs.members.remove',
    method: 'DELETE',
    path: '/v1/orgs/{orgID}/members/{userID}',
    summary: 'Remove a member from an organization (platform admin)',
    auth: 'platform-admin',
    params: OrgMemberParams,
    status: 200,
    response: lazySchema(() => z.object({ deleted: z.literal(true), user_id: Uuid, note: z.string() })),
  }),
};
