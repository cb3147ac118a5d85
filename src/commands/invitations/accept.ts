import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { tokenFromLink } from '../../cli/project-flag.js';
import { askHidden, readStdin, requireTty } from '../../cli/prompt.js';
import { invitationRoutes } from '../../api/invitations.js';
import { UsageError } from '../../client/errors.js';

export default class InvitationsAccept extends BaseCommand {
  static override summary = 'Accept an invitation; creates your account when you have none';
  static override description =
    'Without an account for the invited e-mail, accepting creates one with the password you choose (hidden prompt, or --password-stdin in scripts). With an account, the role is granted and your password is left unchanged.';
  static override examples = [
    '<%= config.bin %> invitations accept inv_XXXX',
    'printf %s "$NEW_PASSWORD" | <%= config.bin %> invitations accept inv_XXXX --password-stdin',
    '<%= config.bin %> invitations accept https://platform.example.com/invite/inv_XXXX --json',
  ];
  static override args = { token: Args.string({ required: true, description: 'invitation token or accept link' }) };
  static override flags = { 'password-stdin': Flags.boolean({ description: 'read the new account password from stdin' }) };

  async run() {
    const { args, flags } = await this.parse(InvitationsAccept);
    const client = (await this.connect({ anonymous: true })).client;
    const token = tokenFromLink(args.token);
    const preview = await client.call(invitationRoutes.preview, { params: { token } });
    let password: string | undefined;
    if (!preview.account_exists) {
      if (flags['password-stdin']) password = (await readStdin()).replace(/\r?\n$/, '');
      else {
        requireTty('choosing a password', 'use --password-stdin in scripts');
        password = await askHidden(`New password for ${preview.email}: `);
        if ((await askHidden('Repeat it: ')) !== password) throw new UsageError('the passwords do not match');
      }
    }
    const res = await client.call(invitationRoutes.accept, { body: { token, ...(password !== undefined ? { password } : {}) } });
    this.print(`joined ${preview.project_slug} as ${res.role} (${res.email}): ${res.note}`);
    this.note(`sign in with \`platform login --email ${res.email}\``);
    return res;
  }
}
