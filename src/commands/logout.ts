import { BaseCommand } from '../cli/base-command.js';
import { authRoutes } from '../api/auth.js';
import { CredentialStore } from '../client/credentials.js';
import { getContext, setSignedOut } from '../client/contexts.js';
import { revokeAutomaticKey } from '../client/local-admin.js';
import { findDaemon } from '../client/local-daemon.js';
import { clientFor, contextUrl } from '../client/session.js';

export default class Logout extends BaseCommand {
  static override summary = "Sign out of the current context: end the session on the server and forget the credential";
  static override description =
    'A session (from `platform login`, with a password or --web) is ended on the server, so its token stops working at once, then forgotten here. API keys stay valid until revoked (`platform keys revoke`), except the key the CLI made for itself on the local context, which logout revokes. On the local context the CLI then stops signing in by itself (with PLATFORM_ADMIN_PASSWORD or a password kept by an earlier version) until `platform login`. When the server cannot be reached the credential is still forgotten, and the command says the session stays valid until it expires.';
  static override examples = ['<%= config.bin %> logout', '<%= config.bin %> logout --context prod'];

  async run() {
    const { flags } = await this.parse(Logout);
    const context = getContext(flags.context);
    const store = new CredentialStore();
    const stored = await store.get(context.name);
    let revoked: string | undefined;
    let sessionEnded = false;
    let problem: string | undefined;
    if (stored?.automatic && context.kind === 'local') {
      // The local context's own key (best effort: a stopped daemon keeps it until `platform keys revoke`).
      const daemon = await findDaemon();
      revoked = daemon ? await revokeAutomaticKey(daemon.url, stored).catch(() => undefined) : undefined;
    } else if (stored && !stored.token.startsWith('svc_')) {
      try {
        // Signing out never starts the local daemon: a stopped one ends no session now.
        const url = context.kind === 'remote' || process.env.PLATFORM_API_URL ? await contextUrl(context) : (await findDaemon())?.url;
        // The refresh token names the session even after the session token expired.
        if (url) sessionEnded = (await clientFor(context, url).call(authRoutes.revoke, { body: { token: stored.refreshToken ?? stored.token } })).revoked;
      } catch (e) {
        problem = (e as Error).message;
      }
    }
    await store.delete(context.name);
    if (context.kind === 'local') setSignedOut(context.name, true);
    this.print(`signed out of ${context.name}${revoked ? ` (revoked the CLI's key ${revoked})` : sessionEnded ? ' (the session was ended on the server)' : ''}`);
    if (context.kind === 'local') this.note('the CLI no longer signs in to the local daemon by itself; sign in again with `platform login`');
    if (problem) this.warn(`the session could not be ended on the server (${problem}); its token stays valid until it expires`);
    return { context: context.name, signed_out: true, session_ended: sessionEnded, ...(revoked ? { revoked_key: revoked } : {}) };
  }
}
