import { BaseCommand } from '../cli/base-command.js';
import { CredentialStore } from '../client/credentials.js';
import { getContext } from '../client/contexts.js';
import { revokeAutomaticKey } from '../client/local-admin.js';
import { findDaemon } from '../client/local-daemon.js';

export default class Logout extends BaseCommand {
  static override summary = "Forget the current context's credential";
  static override description = 'Session tokens are stateless and stay valid until they expire; API keys stay valid until revoked (`platform keys revoke`), except the key the CLI made for itself on the local context, which logout revokes.';
  static override examples = ['<%= config.bin %> logout', '<%= config.bin %> logout --context prod'];

  async run() {
    const { flags } = await this.parse(Logout);
    const context = getContext(flags.context);
    const store = new CredentialStore();
    const stored = await store.get(context.name);
    // The local context's own key is revoked too (best effort: a stopped daemon keeps it until `platform keys revoke`).
    const daemon = stored?.automatic && context.kind === 'local' ? await findDaemon() : undefined;
    const revoked = daemon && stored ? await revokeAutomaticKey(daemon.url, stored).catch(() => undefined) : undefined;
    await store.delete(context.name);
    this.print(`signed out of ${context.name}${revoked ? ` (revoked the CLI's key ${revoked})` : ''}`);
    return { context: context.name, signed_out: true, ...(revoked ? { revoked_key: revoked } : {}) };
  }
}
