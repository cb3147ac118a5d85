import { z } from 'zod';
import { route } from './contract.js';
import { Email, PageQuery, PlatformRole, Timestamp, Uuid } from './common.js';
import { lazySchema } from './lazy.js';

/** User view of spec 1 §2.4. */
export const UserView = lazySchema(() => z.object({
  id: Uuid,
  email: z.string(),
  role: PlatformRole,
  must_change_password: z.boolean(),
  org_id: Uuid.optional(),
  external: z.boolean(),
  created_at: Timestamp,
  projects: z.array(z.string()),
  agents: z.array(z.string()),
  agent_count: z.number().int(),
}));
export type UserView = z.infer<typeof UserView>;

export const CreateUserBody = lazySchema(() => z.strictObject({
  email: Email,
  role: PlatformRole.default('user'),
  password: z.string().optional(),
  org_id: z.string().optional(),
}));

export const UpdateUserBody = lazySchema(() => z.strictObject({ role: PlatformRole.optional() }));

const UserParams = lazySchema(() => z.object({ email: z.string() }));

export const userRoutes = {
  list: route({
    id: 'users.list',
    method: 'GET',
    path: '/v1/users',
    summary: 'List every account (platform admin)',
    auth: 'platform-admin',
    query: PageQuery,
    status: 200,
    response: lazySchema(() => z.object({ users: z.array(UserView), unowned_agents: z.array(z.string()), next_page_token: z.string().optional() })),
  }),
  create: route({
    id: 'users.create',
    method: 'POST',
    path: '/v1/users',
    summary: 'Create an account; a temporary password is generated when none is given',
    auth: 'person',
    body: CreateUserBody,
    status: 201,
    response: lazySchema(() => z.object({ user: UserView, temporary_password: z.string().optional(), note: z.string() })),
  }),
  update: route({
    id: 'users.update',
    method: 'PATCH',
    path: '/v1/users/{email}',
    summary: "Change an account's platform role (platform admin)",
    auth: 'platform-admin',
    params: UserParams,
    body: UpdateUserBody,
    status: 200,
    response: lazySchema(() => z.object({ user: UserView, note: z.string() })),
  }),
  delete: route({
    id: 'users.delete',
    method: 'DELETE',
    path: '/v1/users/{email}',
    summary: 'Delete an account and its grants; its agents keep running (platform admin)',
    auth: 'platform-admin',
    params: UserParams,
    status: 200,
    response: lazySchema(() => z.object({ deleted: z.literal(true), email: z.string(), note: z.string() })),
  }),
  resetPassword: route({
    id: 'users.resetPassword',
    method: 'POST',
    path: '/v1/users/{email}/reset-password',
    summary: 'Give an account a new temporary password, shown once (platform admin)',
    auth: 'platform-admin',
    params: UserParams,
    status: 200,
    response: lazySchema(() => z.object({ email: z.string(), temporary_password: z.string(), note: z.string() })),
  }),
};
