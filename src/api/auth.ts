import { z } from 'zod';
import { route } from './contract.js';
import { Email, PlatformRole, Timestamp, Uuid, printable } from './common.js';

export const LoginBody = z.strictObject({ email: z.string(), password: z.string() });
export const LoginResponse = z.object({
  token: z.string(),
  email: z.string(),
  role: PlatformRole,
  must_change_password: z.boolean(),
  expires_at: z.number().int().describe('Unix seconds'),
});

/** The first admin of a server, with the one-time token it printed (docs/decisions/server.md). */
export const SetupBody = z.strictObject({
  token: z.string().min(1).max(200).describe('the setup token the server printed on its first start'),
  email: Email,
  password: z.string(),
});

/** Identity of spec 1 §2.3a. */
export const Identity = z.object({
  email: z.string(),
  role: PlatformRole,
  must_change_password: z.boolean(),
  expires_at: z.number().int().optional(),
  project_id: Uuid.optional(),
  project_slug: z.string().optional(),
  project_short: z.string().optional(),
});
export type Identity = z.infer<typeof Identity>;

export const ChangePasswordBody = z.strictObject({ current_password: z.string(), new_password: z.string() });

export const ExpiresInDays = z
  .number()
  .int()
  .refine((n) => n === 0 || (n >= 1 && n <= 3650), 'must be 0 (never) or between 1 and 3650');

export const CreateKeyBody = z.strictObject({
  display_name: printable(z.string().trim().min(1).max(100)),
  expires_in_days: ExpiresInDays.optional(),
});

/** Key view of spec 1 §2.8: no field can carry a secret. */
export const KeyView = z.object({
  id: Uuid,
  key_id: z.string(),
  display_name: z.string(),
  kind: z.enum(['personal', 'service_account']),
  created_at: Timestamp,
  expires_at: Timestamp.optional(),
  last_used_at: Timestamp.optional(),
  revoked_at: Timestamp.optional(),
  state: z.enum(['live', 'expired', 'revoked']),
  live: z.boolean(),
});
export type KeyView = z.infer<typeof KeyView>;

export const CreatedKey = z.object({ key: KeyView, secret: z.string(), note: z.string() });

export const authRoutes = {
  login: route({
    id: 'auth.login',
    method: 'POST',
    path: '/v1/auth/login',
    summary: 'Sign in with e-mail and password',
    auth: 'none',
    body: LoginBody,
    status: 200,
    response: LoginResponse,
  }),
  setup: route({
    id: 'auth.setup',
    method: 'POST',
    path: '/v1/auth/setup',
    summary: "Create a server's first admin with its one-time setup token and sign in (409 once an admin exists, 410 when the token expired)",
    auth: 'none',
    body: SetupBody,
    status: 200,
    response: LoginResponse,
  }),
  me: route({
    id: 'auth.me',
    method: 'GET',
    path: '/v1/auth/me',
    summary: 'Identity of the caller',
    auth: 'any',
    allowBeforePasswordChange: true,
    status: 200,
    response: Identity,
  }),
  changePassword: route({
    id: 'auth.changePassword',
    method: 'POST',
    path: '/v1/auth/change-password',
    summary: 'Change the password; returns a fresh session token',
    auth: 'person',
    allowBeforePasswordChange: true,
    body: ChangePasswordBody,
    status: 200,
    response: LoginResponse,
  }),
  listKeys: route({
    id: 'keys.list',
    method: 'GET',
    path: '/v1/users/me/keys',
    summary: 'List your personal API keys',
    auth: 'person',
    status: 200,
    response: z.object({ keys: z.array(KeyView) }),
  }),
  createKey: route({
    id: 'keys.create',
    method: 'POST',
    path: '/v1/users/me/keys',
    summary: 'Create a personal API key; the secret is shown once',
    auth: 'person',
    body: CreateKeyBody,
    status: 201,
    response: CreatedKey,
  }),
  revokeKey: route({
    id: 'keys.revoke',
    method: 'DELETE',
    path: '/v1/users/me/keys/{keyID}',
    summary: 'Revoke a personal API key at once',
    auth: 'person',
    params: z.object({ keyID: z.string() }),
    status: 200,
    response: z.object({ revoked: z.string(), note: z.string() }),
  }),
};
