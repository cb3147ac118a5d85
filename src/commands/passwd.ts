import { Flags } from '@oclif/core';
import { BaseCommand } from '../cli/base-command.js';
import { askHidden, readStdin, requireTty } from '../cli/prompt.js';
import { UsageError } from '../client/errors.js';
import { changePassword } from '../client/passwd.js';

export default class Passwd extends BaseCommand {
  static override summary = 'Change your password';
  static override description =
    'Prompts for the current and the new password (hidden). In scripts, pass --stdin and write two lines to stdin: the current password, then the new one (never on the command line, where other users could read it). The password needs at least 12 characters and 3 of: upper case, lower case, digits, symbols. You stay signed in with a fresh session.';
  static override examples = [
    '<%= config.bin %> passwd',
    'printf "%s\\n%s\\n" "$CURRENT" "$NEW" | <%= config.bin %> passwd --stdin',
    'printf "%s\\n%s\\n" "$CURRENT" "$NEW" | <%= config.bin %> passwd --stdin --json',
  ];
  static override flags = { stdin: Flags.boolean({ description: 'read two lines from stdin: current password, then new password' }) };

  async run() {
    const { flags } = await this.parse(Passwd);
    let current: string;
    let next: string;
    if (flags.stdin) {
      const lines = (await readStdin()).split(/\r?\n/);
      if (lines.length < 2 || !lines[0] || !lines[1]) throw new UsageError('--stdin expects two lines: the current password, then the new one');
      [current, next] = [lines[0], lines[1]];
    } else {
      requireTty('the password prompt', 'use --stdin in scripts (two lines: current, new)');
      current = await askHidden('Current password: ');
      next = await askHidden('New password: ');
      if ((await askHidden('Repeat the new password: ')) !== next) throw new UsageError('the new passwords do not match');
    }
    const res = await changePassword(await this.connect(), current, next);
    this.print(`password changed for ${res.email}${res.stored_in !== 'not-stored' ? `; signed in again (stored in the ${res.stored_in})` : ''}`);
    return res;
  }
}
