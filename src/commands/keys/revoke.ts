import { Args } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { confirm, yesFlag } from '../../cli/flags.js';
import { authRoutes } from '../../api/auth.js';

export default class KeysRevoke extends BaseCommand {
  static override summary = 'Revoke one of your personal API keys at once';
  static override examples = ['<%= config.bin %> keys revoke abc123def456', '<%= config.bin %> keys revoke abc123def456 --json'];
  static override args = { key: Args.string({ required: true, description: 'key id (see `platform keys list`)' }) };
  static override flags = { yes: yesFlag };

  async run() {
    const { args, flags } = await this.parse(KeysRevoke);
    await confirm(flags.yes, `revoke API key ${args.key} (scripts using it stop working at once)`);
    const res = await (await this.client()).call(authRoutes.revokeKey, { params: { keyID: args.key } });
    this.print(`revoked ${res.revoked}: ${res.note}`);
    return res;
  }
}
