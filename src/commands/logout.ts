import { BaseCommand } from '../cli/base-command.js';
import { CredentialStore } from '../client/credentials.js';
import { getContext } from '../client/contexts.js';

export default class Logout extends BaseCommand {
  static override summary = "Forget the current context's credential";
  static override description = 'Session tokens are stateless and stay valid until they expire; API keys stay valid until revoked (`platform keys revoke`).';
  static override examples = ['<%= config.bin %> logout', '<%= config.bin %> logout --context prod'];

  async run() {
    const { flags } = await this.parse(Logout);
    const context = getContext(flags.context);
    await new CredentialStore().delete(context.name);
    this.print(`signed out of ${context.name}`);
    return { context: context.name, signed_out: true };
  }
}
