import { serviceAccountRoutes as sa } from '../../../api/service-accounts.js';
import type { Area } from '../../area.js';
import {
  createServiceAccount,
  createServiceAccountKey,
  deleteServiceAccount,
  listServiceAccountKeys,
  listServiceAccounts,
  revokeServiceAccountKey,
} from './service.js';

/**
 * Service accounts and their keys (spec 1 §4.10). Every write route is person-only in its contract,
 * so a machine credential never creates or manages credentials, accounts or memberships (403).
 */
export const serviceAccountsArea: Area = {
  name: 'service-accounts',
  register(r, ctx) {
    r.handle(sa.list, ({ principal, params, query }) => listServiceAccounts(ctx, principal!, params.projectID, query));
    r.handle(sa.create, ({ principal, params, body, requestId }) => createServiceAccount(ctx, principal!, params.projectID, body, requestId));
    r.handle(sa.delete, ({ principal, params, requestId }) => deleteServiceAccount(ctx, principal!, params.projectID, params.sa, requestId));
    r.handle(sa.listKeys, ({ principal, params, query }) => listServiceAccountKeys(ctx, principal!, params.projectID, params.sa, query));
    r.handle(sa.createKey, ({ principal, params, body, requestId }) =>
      createServiceAccountKey(ctx, principal!, params.projectID, params.sa, body, requestId),
    );
    r.handle(sa.revokeKey, ({ principal, params, requestId }) =>
      revokeServiceAccountKey(ctx, principal!, params.projectID, params.sa, params.keyID, requestId),
    );
  },
};
