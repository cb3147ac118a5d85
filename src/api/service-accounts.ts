import { z } from 'zod';
import { route } from './contract.js';
import { PageQuery, Role, Timestamp, Uuid, printable } from './common.js';
import { ProjectParams } from './projects.js';
import { CreateKeyBody, CreatedKey, KeyView } from './auth.js';
import { lazySchema } from './lazy.js';

/** Service-account names are DNS-1035 labels (spec 1 §2.8, §8.2), reserved permanently. */
export const ServiceAccountName = lazySchema(() => z
  .string()
  .max(63, 'must be at most 63 characters')
  .regex(/^[a-z]([-a-z0-9]*[a-z0-9])?$/, 'must be a DNS-1035 label: lowercase letters, digits and hyphens, starting with a letter, not ending with a hyphen'));

/** Service account of spec 1 §2.8; the e-mail is derived from name and project short and never changes. */
export const ServiceAccountView = lazySchema(() => z.object({
  id: Uuid,
  project_id: Uuid,
  name: z.string(),
  email: z.string(),
  display_name: z.string(),
  role: Role.optional(),
  disabled: z.boolean(),
  created_at: Timestamp,
  deleted_at: Timestamp.optional(),
}));
export type ServiceAccountView = z.infer<typeof ServiceAccountView>;

export const CreateServiceAccountBody = lazySchema(() => z.strictObject({
  name: ServiceAccountName,
  display_name: printable(z.string().trim().max(100)).optional(),
  /** Alias of display_name; display_name wins when both are sent. */
  description: printable(z.string().trim().max(100)).optional(),
  role: Role.default('member'),
}));

const SaParams = lazySchema(() => ProjectParams.extend({ sa: z.string() }));
const SaKeyParams = lazySchema(() => SaParams.extend({ keyID: z.string() }));

export const serviceAccountRoutes = {
  list: route({
    id: 'serviceAccounts.list',
    method: 'GET',
    path: '/v1/projects/{projectID}/service-accounts',
    summary: "List a project's service accounts, by name",
    auth: 'any',
    params: ProjectParams,
    query: PageQuery,
    status: 200,
    response: lazySchema(() => z.object({ service_accounts: z.array(ServiceAccountView), next_page_token: z.string().optional() })),
  }),
  create: route({
    id: 'serviceAccounts.create',
    method: 'POST',
    path: '/v1/projects/{projectID}/service-accounts',
    summary: 'Create a service account (also a project member with the given role)',
    auth: 'any', // machine credentials are refused after the project lookup (404 first)
    params: ProjectParams,
    body: CreateServiceAccountBody,
    status: 201,
    response: lazySchema(() => z.object({ service_account: ServiceAccountView, note: z.string() })),
  }),
  delete: route({
    id: 'serviceAccounts.delete',
    method: 'DELETE',
    path: '/v1/projects/{projectID}/service-accounts/{sa}',
    summary: 'Delete a service account: keys revoked, grant removed, name stays reserved',
    auth: 'any', // machine credentials are refused after the project lookup (404 first)
    params: SaParams,
    status: 200,
    response: lazySchema(() => z.object({ deleted: z.literal(true), service_account: ServiceAccountView, revoked_keys: z.number().int(), note: z.string() })),
  }),
  listKeys: route({
    id: 'serviceAccounts.keys.list',
    method: 'GET',
    path: '/v1/projects/{projectID}/service-accounts/{sa}/keys',
    summary: "List a service account's keys, newest first",
    auth: 'any',
    params: SaParams,
    query: PageQuery,
    status: 200,
    response: lazySchema(() => z.object({ keys: z.array(KeyView), next_page_token: z.string().optional() })),
  }),
  createKey: route({
    id: 'serviceAccounts.keys.create',
    method: 'POST',
    path: '/v1/projects/{projectID}/service-accounts/{sa}/keys',
    summary: 'Create a service-account key; the secret is shown once',
    auth: 'any', // machine credentials are refused after the project lookup (404 first)
    params: SaParams,
    body: CreateKeyBody,
    status: 201,
    response: CreatedKey,
  }),
  revokeKey: route({
    id: 'serviceAccounts.keys.revoke',
    method: 'DELETE',
    path: '/v1/projects/{projectID}/service-accounts/{sa}/keys/{keyID}',
    summary: 'Revoke a service-account key at once',
    auth: 'any', // machine credentials are refused after the project lookup (404 first)
    params: SaKeyParams,
    status: 200,
    response: lazySchema(() => z.object({ revoked: z.string(), note: z.string() })),
  }),
};
