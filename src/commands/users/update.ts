import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { userRoutes } from '../../api/users.js';

export default class UsersUpdate extends BaseCommand {
  static override summary = "Change an account's platform role (platform admin)";
  static override examples = ['<%= config.bin %> users update dev@example.com --role admin', '<%= config.bin %> users update dev@example.com --role user --json'];
  static override args = { email: Args.string({ required: true, description: 'e-mail of the account' }) };
  static override flags = { role: Flags.string({ description: 'new platform role', options: ['user', 'admin'], required: true }) };

  async run() {
    const { args, flags } = await this.parse(UsersUpdate);
    const res = await (await this.client()).call(userRoutes.update, { params: { email: args.email }, body: { role: flags.role as 'user' | 'admin' } });
    this.fields({ email: res.user.email, role: res.user.role });
    this.note(res.note);
    return res;
  }
}
