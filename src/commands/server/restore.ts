import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { startSpinner } from '../../cli/spinner.js';
import { restoreBackup } from '../../client/server-restore.js';

export default class ServerRestore extends BaseCommand {
  static override summary = 'Restore a backup archive into a new, empty state directory';
  static override description = [
    'Unpacks an archive written by `platform server backup` into DIR, which must be empty or not exist, with the daemon\'s',
    'permissions (0700 directories, 0600 files). Paths recorded under the old state directory are rewritten to DIR.',
    'Then start the platform on it, for example `PLATFORM_HOME=DIR platform daemon start`.',
  ].join('\n');
  static override examples = [
    '<%= config.bin %> server restore platform-backup.tar.gz --home /var/lib/platform',
    '<%= config.bin %> server restore backup.tar.gz --home ./restored --json',
  ];
  static override args = { file: Args.string({ description: 'the backup archive (.tar.gz)', required: true }) };
  static override flags = {
    home: Flags.string({ description: 'the state directory to restore into (empty or missing)', required: true }),
  };

  async run() {
    const { args, flags } = await this.parse(ServerRestore);
    const spinner = startSpinner(`restoring ${args.file} into ${flags.home}`, { quiet: this.jsonEnabled() });
    try {
      const result = await restoreBackup(args.file, flags.home);
      spinner.succeed(`restored into ${result.home}`);
      this.fields({ home: result.home, from: result.from_home, taken: result.created_at, version: result.platform_version, relocated: result.relocated ? 'yes' : 'no' });
      this.print(`start it with: PLATFORM_HOME=${result.home} platform daemon start`);
      return result;
    } catch (e) {
      spinner.fail('restore failed');
      throw e;
    }
  }
}
