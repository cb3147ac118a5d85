import { Args } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { confirm, yesFlag } from '../../cli/flags.js';
import { userRoutes } from '../../api/users.js';

export default class UsersDelete extends BaseCommand {
  static override summary = 'Delete an account with its grants and keys; its agents keep running (platform admin)';
  static override examples = ['<%= config.bin %> users delete dev@example.com --yes', '<%= config.bin %> users delete dev@example.com --yes --json'];
  static override args = { email: Args.string({ required: true, description: 'e-mail of the account' }) };
  static override flags = { yes: yesFlag };

  async run() {
    const { args, flags } = await this.parse(UsersDelete);
    await confirm(flags.yes, `delete the account ${args.email}`);
    const res = await (await this.client()).call(userRoutes.delete, { params: { email: args.email } });
    this.print(`deleted ${res.email}`);
    this.note(res.note);
    return res;
  }
}
