import { authRoutes } from '../../../api/auth.js';
import type { Area } from '../../area.js';
import { SignIn, createPersonalKey, identity, listPersonalKeys, revokePersonalKey } from './service.js';
import type { PersonPrincipal } from './principal.js';
import { refreshSession, revokeSession, signInSessionMigrations } from './sign-in-sessions.js';
import { deviceMigrations, pollDeviceSignIn, startDeviceSignIn } from './device-flow.js';
import { decideOnDevicePage, showDevicePage } from './device-page.js';
import { setUp } from './setup-token.js';

/** Sign-in, sessions, device sign-in, identity, password change and personal API keys (spec 1 §4.2, §4.9; issue 24 §2). */
export const authArea: Area = {
  name: 'auth',
  migrations: [...signInSessionMigrations, ...deviceMigrations],
  register(r, ctx) {
    const signIn = new SignIn(ctx);
    r.handle(authRoutes.login, ({ body, ip, requestId }) => signIn.login(body, ip, requestId));
    r.handle(authRoutes.refresh, ({ body, requestId }) => refreshSession(ctx, body.refresh_token, requestId));
    r.handle(authRoutes.revoke, ({ body, requestId }) => revokeSession(ctx, body.token, requestId));
    r.handle(authRoutes.deviceCode, ({ body, ip }) => startDeviceSignIn(ctx, body, ip));
    r.handle(authRoutes.deviceToken, ({ body, requestId }) => pollDeviceSignIn(ctx, body.device_code, requestId));
    r.raw(authRoutes.devicePage, async (c) => showDevicePage(ctx, c));
    r.raw(authRoutes.deviceDecide, (c) => decideOnDevicePage(ctx, signIn, c));
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
