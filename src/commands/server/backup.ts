import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { startSpinner } from '../../cli/spinner.js';
import { downloadBackup } from '../../client/server-backup.js';

export default class ServerBackup extends BaseCommand {
  static override summary = 'Write a consistent backup of the platform to a file while it serves';
  static override description = [
    'One tar.gz archive of the state directory, taken online: the store (SQLite online backup), keys, vector saves, buckets,',
    'serverless sources, built revisions and the data of persistent caches (a fresh snapshot). Needs the platform admin role;',
    'works against a local or a remote context. Restore it with `platform server restore FILE --home DIR`.',
  ].join('\n');
  static override examples = [
    '<%= config.bin %> server backup platform-backup.tar.gz',
    '<%= config.bin %> server backup /backups/$(date +%F).tar.gz --context prod',
    '<%= config.bin %> server backup backup.tar.gz --json',
  ];
  static override args = { file: Args.string({ description: 'where to write the archive (.tar.gz)', required: true }) };
  static override flags = {
    timeout: Flags.integer({ description: 'seconds to wait for the whole backup', default: 3600, min: 1 }),
  };

  async run() {
    const { args, flags } = await this.parse(ServerBackup);
    const client = await this.client();
    const spinner = startSpinner('backing up the platform', { quiet: this.jsonEnabled() });
    try {
      const result = await downloadBackup(client, args.file, flags.timeout);
      spinner.succeed(`backup written to ${result.file} (${formatBytes(result.bytes)})`);
      return result;
    } catch (e) {
      spinner.fail('backup failed');
      throw e;
    }
  }
}

const formatBytes = (n: number) => (n < 1024 ? `${n} B` : n < 1024 ** 2 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1024 ** 2).toFixed(1)} MiB`);
