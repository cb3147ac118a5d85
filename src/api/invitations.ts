import { z } from 'zod';
import { route } from './contract.js';
import { Email, PageQuery, Role, Timestamp, Uuid } from './common.js';
import { ProjectParams } from './projects.js';
import { lazySchema } from './lazy.js';

/** Invitation of spec 1 §2.7. Only a hash of the token is stored, so token and accept_url exist only on creation. */
export const InvitationView = lazySchema(() => z.object({
  id: Uuid,
  project_id: Uuid,
  email: z.string(),
  role: Role,
  state: z.enum(['open', 'accepted', 'revoked', 'expired']),
  invited_by: z.string().optional(),
  created_at: Timestamp,
  expires_at: Timestamp,
  accepted_at: Timestamp.optional(),
  revoked_at: Timestamp.optional(),
}));
export type InvitationView = z.infer<typeof InvitationView>;

export const CreatedInvitation = lazySchema(() => InvitationView.extend({
  token: z.string().describe('shown once'),
  accept_url: z.string().describe('path form /invite/<token>'),
}));

/** Project member of spec 1 §2.6, as returned when an invitation finds an existing account. */
export const InvitedMember = lazySchema(() => z.object({
  user_id: Uuid,
  email: z.string(),
  role: Role,
  kind: z.literal('user'),
  external: z.boolean(),
  created_at: Timestamp,
}));

export const CreateInvitationBody = lazySchema(() => z.strictObject({ email: Email, role: Role.default('member') }));

/** 201 body: an invitation with its one-time token, or (existing account) the member granted at once. */
export const CreateInvitationResponse = lazySchema(() => z.union([
  z.object({ invitation: CreatedInvitation, note: z.string() }),
  z.object({ member: InvitedMember, note: z.string() }),
]));

export const InvitationPreview = lazySchema(() => z.object({
  project_name: z.string(),
  project_slug: z.string(),
  email: z.string(),
  role: Role,
  expires_at: Timestamp,
  account_exists: z.boolean(),
}));

export const AcceptInvitationBody = lazySchema(() => z.strictObject({
  token: z.string().min(1).max(200),
  password: z.string().max(1024).optional(),
}));

export const AcceptedInvitation = lazySchema(() => z.object({
  accepted: z.literal(true),
  project_id: Uuid,
  role: Role,
  email: z.string(),
  note: z.string(),
}));

const InvitationParams = lazySchema(() => ProjectParams.extend({ invitationID: z.string() }));

export const invitationRoutes = {
  list: route({
    id: 'invitations.list',
    method: 'GET',
    path: '/v1/projects/{projectID}/invitations',
    summary: "List a project's invitations, newest first",
    auth: 'any',
    params: ProjectParams,
    query: PageQuery,
    status: 200,
    response: lazySchema(() => z.object({ invitations: z.array(InvitationView), next_page_token: z.string().optional() })),
  }),
  create: route({
    id: 'invitations.create',
    method: 'POST',
    path: '/v1/projects/{projectID}/invitations',
    summary: 'Invite an e-mail to a project (an existing account is added as a member at once)',
    auth: 'any', // machine credentials are refused after the project lookup (404 first)
    params: ProjectParams,
    body: CreateInvitationBody,
    status: 201,
    response: CreateInvitationResponse,
  }),
  revoke: route({
    id: 'invitations.revoke',
    method: 'DELETE',
    path: '/v1/projects/{projectID}/invitations/{invitationID}',
    summary: 'Revoke an open invitation',
    auth: 'any', // machine credentials are refused after the project lookup (404 first)
    params: InvitationParams,
    status: 200,
    response: lazySchema(() => z.object({ revoked: Uuid, invitation: InvitationView, note: z.string() })),
  }),
  preview: route({
    id: 'invitations.preview',
    method: 'GET',
    path: '/v1/invitations/{token}',
    summary: 'Preview an invitation (the token is the credential)',
    auth: 'none',
    params: lazySchema(() => z.object({ token: z.string() })),
    status: 200,
    response: InvitationPreview,
  }),
  accept: route({
    id: 'invitations.accept',
    method: 'POST',
    path: '/v1/invitations/accept',
    summary: 'Accept an invitation; a password creates the account when none exists',
    auth: 'none',
    body: AcceptInvitationBody,
    status: 200,
    response: AcceptedInvitation,
  }),
};
