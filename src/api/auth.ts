import { z } from 'zod';
import { route } from './contract.js';
import { Email, PlatformRole, Timestamp, Uuid, printable } from './common.js';
import { lazySchema } from './lazy.js';

export const LoginBody = lazySchema(() => z.strictObject({ email: z.string(), password: z.string() }));
export const LoginResponse = lazySchema(() => z.object({
  token: z.string(),
  email: z.string(),
  role: PlatformRole,
  must_change_password: z.boolean(),
  expires_at: z.number().int().describe('Unix seconds'),
  refresh_token: z.string().optional().describe('trades for a fresh session at POST /v1/auth/refresh; single use (rotated)'),
  refresh_expires_at: z.number().int().optional().describe('Unix seconds'),
}));

/** The first admin of a server, with the one-time token it printed (docs/decisions/server.md). */
export const SetupBody = lazySchema(() => z.strictObject({
  token: z.string().min(1).max(200).describe('the setup token the server printed on its first start'),
  email: Email,
  password: z.string(),
}));

/** Identity of spec 1 §2.3a. */
export const Identity = lazySchema(() => z.object({
  email: z.string(),
  role: PlatformRole,
  must_change_password: z.boolean(),
  expires_at: z.number().int().optional(),
  project_id: Uuid.optional(),
  project_slug: z.string().optional(),
  project_short: z.string().optional(),
}));
export type Identity = z.infer<typeof Identity>;

export const ChangePasswordBody = lazySchema(() => z.strictObject({ current_password: z.string(), new_password: z.string() }));

export const ExpiresInDays = lazySchema(() => z
  .number()
  .int()
  .refine((n) => n === 0 || (n >= 1 && n <= 3650), 'must be 0 (never) or between 1 and 3650'));

export const CreateKeyBody = lazySchema(() => z.strictObject({
  display_name: printable(z.string().trim().min(1).max(100)),
  expires_in_days: ExpiresInDays.optional(),
}));

/** Key view of spec 1 §2.8: no field can carry a secret. */
export const KeyView = lazySchema(() => z.object({
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
}));
export type KeyView = z.infer<typeof KeyView>;

export const CreatedKey = lazySchema(() => z.object({ key: KeyView, secret: z.string(), note: z.string() }));

export const RefreshBody = lazySchema(() => z.strictObject({ refresh_token: z.string().max(512) }));
export const RevokeBody = lazySchema(() => z.strictObject({ token: z.string().max(4096).describe('a session token or a refresh token (RFC 7009)') }));

/** RFC 8628 §3.1-3.2 over JSON: what the CLI shows and how often it may poll. */
export const DeviceCodeBody = lazySchema(() => z.strictObject({
  client_name: printable(z.string().trim().min(1).max(80)).optional().describe('shown on the approval page, e.g. "platform CLI on laptop"'),
}));
export const DeviceCode = lazySchema(() => z.object({
  device_code: z.string().describe('secret of the polling client; the server keeps only its hash'),
  user_code: z.string().describe('what the person types on the approval page, e.g. BCDF-GHJK'),
  verification_uri: z.string(),
  verification_uri_complete: z.string().describe('verification_uri with the user code filled in'),
  expires_in: z.number().int().describe('seconds'),
  interval: z.number().int().describe('least seconds between two polls'),
}));
export const DeviceTokenBody = lazySchema(() => z.strictObject({
  device_code: z.string().max(256),
  grant_type: z.literal('urn:ietf:params:oauth:grant-type:device_code').optional(),
}));
/** The approval page's form (application/x-www-form-urlencoded), strict like every body. */
export const DeviceDecisionForm = lazySchema(() => z.strictObject({
  user_code: z.string().max(32),
  email: z.string().max(320),
  password: z.string().max(1024),
  csrf: z.string().max(128).describe('must match the platform_device_csrf cookie the page set'),
  action: z.enum(['approve', 'deny']),
}));

/** RFC 8628 §3.5 error codes, carried as `code` beside the envelope's `error` message. */
export const DEVICE_ERRORS = ['authorization_pending', 'slow_down', 'access_denied', 'expired_token', 'invalid_grant'] as const;
export type DeviceError = (typeof DEVICE_ERRORS)[number];

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
  refresh: route({
    id: 'auth.refresh',
    method: 'POST',
    path: '/v1/auth/refresh',
    summary: 'Trade a refresh token for a fresh session token and a new refresh token (the old one stops working)',
    auth: 'none',
    body: RefreshBody,
    status: 200,
    response: LoginResponse,
  }),
  revoke: route({
    id: 'auth.revoke',
    method: 'POST',
    path: '/v1/auth/revoke',
    summary: 'End the sign-in session a session or refresh token belongs to (RFC 7009; 200 whatever the token)',
    auth: 'none',
    body: RevokeBody,
    status: 200,
    response: lazySchema(() => z.object({ revoked: z.boolean() })),
  }),
  deviceCode: route({
    id: 'auth.device.code',
    method: 'POST',
    path: '/v1/auth/device/code',
    summary: 'Start a device sign-in (RFC 8628): a user code for the person, a device code for the polling client',
    auth: 'none',
    body: DeviceCodeBody,
    status: 200,
    response: DeviceCode,
  }),
  deviceToken: route({
    id: 'auth.device.token',
    method: 'POST',
    path: '/v1/auth/device/token',
    summary: 'Poll a device sign-in: 200 with a session once approved; 400 with code authorization_pending, slow_down, access_denied, expired_token or invalid_grant',
    auth: 'none',
    body: DeviceTokenBody,
    status: 200,
    response: LoginResponse,
  }),
  devicePage: route({
    id: 'auth.device.page',
    method: 'GET',
    path: '/device',
    summary: 'HTML page where a person signs in and approves or denies a device code',
    auth: 'none',
    query: lazySchema(() => z.object({ user_code: z.string().max(32).optional() })),
    media: { response: 'text/html' },
    status: 200,
    response: lazySchema(() => z.string()),
  }),
  deviceDecide: route({
    id: 'auth.device.decide',
    method: 'POST',
    path: '/device',
    summary: 'Form post of the approval page (application/x-www-form-urlencoded, CSRF-checked)',
    auth: 'none',
    body: DeviceDecisionForm,
    bodyLimit: 4096,
    media: { request: 'application/x-www-form-urlencoded', response: 'text/html' },
    status: 200,
    response: lazySchema(() => z.string()),
  }),
  listKeys: route({
    id: 'keys.list',
    method: 'GET',
    path: '/v1/users/me/keys',
    summary: 'List your personal API keys',
    auth: 'person',
    status: 200,
    response: lazySchema(() => z.object({ keys: z.array(KeyView) })),
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
    params: lazySchema(() => z.object({ keyID: z.string() })),
    status: 200,
    response: lazySchema(() => z.object({ revoked: z.string(), note: z.string() })),
  }),
};
