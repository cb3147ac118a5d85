import { z } from 'zod';
import { route } from './contract.js';
import { Email, PageQuery, Role, Timestamp } from './common.js';
import { ProjectParams } from './projects.js';
import { lazySchema } from './lazy.js';

/** Project member of spec 1 §2.6, with the break-glass fields on break-glass rows. */
export const MemberView = lazySchema(() => z.object({
  user_id: z.string(),
  email: z.string(),
  role: Role,
  kind: z.enum(['user', 'service_account']),
  service_account_id: z.string().optional(),
  external: z.boolean(),
  created_at: Timestamp,
  break_glass: z.literal(true).optional(),
  expires_at: Timestamp.optional(),
  reason: z.string().optional(),
  granted_by: z.string().optional(),
  expired: z.boolean().optional(),
}));
export type MemberView = z.infer<typeof MemberView>;

const MemberParams = lazySchema(() => ProjectParams.extend({ userID: z.string() }));
const SaMemberParams = lazySchema(() => ProjectParams.extend({ saID: z.string() }));

/** Break-glass request of spec 1 §4.7; the length and duration rules give their own 400 texts. */
export const BreakGlassBody = lazySchema(() => z.strictObject({
  reason: z.string(),
  role: Role.default('admin'),
  minutes: z.number().int().min(1).default(240),
}));

export const memberRoutes = {
  list: route({
    id: 'members.list',
    method: 'GET',
    path: '/v1/projects/{projectID}/members',
    summary: "List a project's members, service accounts and break-glass grants",
    auth: 'any',
    params: ProjectParams,
    query: PageQuery,
    status: 200,
    response: lazySchema(() => z.object({ members: z.array(MemberView), next_page_token: z.string().optional() })),
  }),
  add: route({
    id: 'members.add',
    method: 'POST',
    path: '/v1/projects/{projectID}/members',
    summary: 'Grant a role on the project to an existing account',
    auth: 'person',
    params: ProjectParams,
    body: lazySchema(() => z.strictObject({ email: Email, role: Role.default('member') })),
    status: 201,
    response: lazySchema(() => z.object({ member: MemberView, note: z.string() })),
  }),
  update: route({
    id: 'members.update',
    method: 'PATCH',
    path: '/v1/projects/{projectID}/members/{userID}',
    summary: "Change a user member's role",
    auth: 'person',
    params: MemberParams,
    body: lazySchema(() => z.strictObject({ role: Role })),
    status: 200,
    response: lazySchema(() => z.object({ user_id: z.string(), role: Role })),
  }),
  remove: route({
    id: 'members.remove',
    method: 'DELETE',
    path: '/v1/projects/{projectID}/members/{userID}',
    summary: "Remove a user's grant (ends a break-glass grant early)",
    auth: 'person',
    params: MemberParams,
    status: 200,
    response: lazySchema(() => z.object({ deleted: z.literal(true), user_id: z.string(), note: z.string() })),
  }),
  updateServiceAccount: route({
    id: 'members.sa.update',
    method: 'PATCH',
    path: '/v1/projects/{projectID}/members/service-accounts/{saID}',
    summary: "Change a service account's role on the project",
    auth: 'person',
    params: SaMemberParams,
    body: lazySchema(() => z.strictObject({ role: Role })),
    status: 200,
    response: lazySchema(() => z.object({ service_account_id: z.string(), role: Role })),
  }),
  removeServiceAccount: route({
    id: 'members.sa.remove',
    method: 'DELETE',
    path: '/v1/projects/{projectID}/members/service-accounts/{saID}',
    summary: "Remove a service account's grant; the account and its keys live on",
    auth: 'person',
    params: SaMemberParams,
    status: 200,
    response: lazySchema(() => z.object({ deleted: z.literal(true), service_account_id: z.string(), note: z.string() })),
  }),
  breakGlass: route({
    id: 'members.breakGlass',
    method: 'POST',
    path: '/v1/projects/{projectID}/break-glass',
    summary: 'Grant yourself a time-limited role on the project contents (platform admin)',
    auth: 'platform-admin',
    params: ProjectParams,
    body: BreakGlassBody,
    status: 201,
    response: lazySchema(() => z.object({ grant: MemberView, note: z.string() })),
  }),
};
