import { Args } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { userRoutes } from '../../api/users.js';

export default class UsersResetPassword extends BaseCommand {
  static override summary = 'Give an account a new temporary password, shown once (platform admin)';
  static override examples = ['<%= config.bin %> users reset-password dev@example.com', '<%= config.bin %> users reset-password dev@example.com --json'];
  static override args = { email: Args.string({ required: true, description: 'e-mail of the account' }) };

  async run() {
    const { args } = await this.parse(UsersResetPassword);
    const res = await (await this.client()).call(userRoutes.resetPassword, { params: { email: args.email } });
    this.fields({ email: res.email, temporary_password: res.temporary_password });
    this.note(res.note);
    return res;
  }
}
