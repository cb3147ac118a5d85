import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { readStdin } from '../../cli/prompt.js';
import { userRoutes } from '../../api/users.js';

export default class UsersCreate extends BaseCommand {
  static override summary = 'Create an account; a temporary password is generated unless you give one';
  static override description =
    'Platform admins create accounts anywhere, org admins in their organizations, project admins in their own organization. Every new account must change its password at first sign-in.';
  static override examples = [
    '<%= config.bin %> users create dev@example.com',
    '<%= config.bin %> users create ops@example.com --role admin --json',
    'echo "S3cure-Passw0rd" | <%= config.bin %> users create dev@example.com --password-stdin',
    '<%= config.bin %> users create dev@example.com --org 0b0c6c2e-5d4f-4a8e-9a71-3b1f2f6f9e10',
  ];
  static override args = { email: Args.string({ required: true, description: 'sign-in e-mail of the new account' }) };
  static override flags = {
    role: Flags.string({ description: 'platform role', options: ['user', 'admin'], default: 'user' }),
    'password-stdin': Flags.boolean({ description: 'read the initial password from stdin instead of generating one' }),
    org: Flags.string({ description: 'home organization id (default: yours)' }),
  };

  async run() {
    const { args, flags } = await this.parse(UsersCreate);
    const password = flags['password-stdin'] ? (await readStdin()).replace(/\r?\n$/, '') : undefined;
    const res = await (await this.client()).call(userRoutes.create, {
      body: { email: args.email, role: flags.role as 'user' | 'admin', password, org_id: flags.org },
    });
    this.fields({ email: res.user.email, role: res.user.role, id: res.user.id, org_id: res.user.org_id, temporary_password: res.temporary_password });
    this.note(res.note);
    return res;
  }
}
