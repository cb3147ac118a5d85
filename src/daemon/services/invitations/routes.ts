import { invitationRoutes } from '../../../api/invitations.js';
import type { Area } from '../../area.js';
import { invitationMigrations } from './migrations.js';
import { acceptInvitation, createInvitation, listInvitations, previewInvitation, revokeInvitation } from './service.js';

/** Project invitations: create, list, revoke, and the tokened preview and accept (spec 1 §4.8). */
export const invitationsArea: Area = {
  name: 'invitations',
  migrations: invitationMigrations,
  register(r, ctx) {
    r.handle(invitationRoutes.list, ({ principal, params, query }) => listInvitations(ctx, principal!, params.projectID, query));
    r.handle(invitationRoutes.create, ({ principal, params, body, requestId }) =>
      createInvitation(ctx, principal!, params.projectID, body, requestId),
    );
    r.handle(invitationRoutes.revoke, ({ principal, params, requestId }) =>
      revokeInvitation(ctx, principal!, params.projectID, params.invitationID, requestId),
    );
    r.handle(invitationRoutes.preview, ({ params }) => previewInvitation(ctx, params.token));
    r.handle(invitationRoutes.accept, ({ body, ip, requestId }) => acceptInvitation(ctx, body, ip, requestId));
  },
};
