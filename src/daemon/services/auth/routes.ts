import { authRoutes } from '../../../api/auth.js';
import type { Area } from '../../area.js';
import { SignIn, createPersonalKey, identity, listPersonalKeys, revokePersonalKey } from './service.js';
import type { PersonPrincipal } from './principal.js';
import { setUp } from './setup-token.js';

/** Sign-in, identity, password change and personal API keys (spec 1 §4.2, §4.9). */
export const authArea: Area = {
  name: 'auth',
  register(r, ctx) {
    const signIn = new SignIn(ctx);
    r.handle(authRoutes.login, ({ body, ip, requestId }) => signIn.login(body, ip, requestId));
    r.handle(authRoutes.setup, ({ body, ip, requestId }) => setUp(ctx, signIn, body, ip, requestId));
    r.handle(authRoutes.me, ({ principal }) => identity(ctx, principal!));
    r.handle(authRoutes.changePassword, ({ principal, body, ip, requestId }) =>
      signIn.changePassword(principal as PersonPrincipal, body, ip, requestId),
    );
    r.handle(authRoutes.listKeys, ({ principal }) => listPersonalKeys(ctx, principal as PersonPrincipal));
    r.handle(authRoutes.createKey, ({ principal, body, requestId }) =>
      createPersonalKey(ctx, principal as PersonPrincipal, body, requestId),
    );
    r.handle(authRoutes.revokeKey, ({ principal, params, requestId }) =>
      revokePersonalKey(ctx, principal as PersonPrincipal, params.keyID, requestId),
    );
  },
};
