import { BaseCommand } from '../../cli/base-command.js';
import { keyColumns } from '../../cli/key-table.js';
import { authRoutes } from '../../api/auth.js';

export default class KeysList extends BaseCommand {
  static override summary = 'List your personal API keys';
  static override examples = ['<%= config.bin %> keys list', '<%= config.bin %> keys list --json'];

  async run() {
    const res = await (await this.client()).call(authRoutes.listKeys);
    this.table(res.keys, keyColumns, 'no keys');
    return res;
  }
}
