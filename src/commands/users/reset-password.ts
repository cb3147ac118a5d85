import { Args } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { userRoutes } from '../../api/users.js';
import { confirm, yesFlag } from '../../cli/flags.js';

export default class UsersResetPassword extends BaseCommand {
  static override summary = 'Give an account a new temporary password, shown once (platform admin)';
  static override examples = ['<%= config.bin %> users reset-password dev@example.com', '<%= config.bin %> users reset-password dev@example.com --json'];
  static override args = { email: Args.string({ required: true, description: 'e-mail of the account' }) };
  static override flags = { yes: yesFlag };

  async run() {
    const { args, flags } = await this.parse(UsersResetPassword);
    await confirm(flags.yes, `reset the password of ${args.email} (their sessions end)`);
    const res = await (await this.client()).call(userRoutes.resetPassword, { params: { email: args.email } });
    this.fields({ email: res.email, temporary_password: res.temporary_password });
    this.note(res.note);
    return res;
  }
}
