import { BaseCommand } from '../../cli/base-command.js';
import { poolStats, sandboxClient } from '../../client/sandbox.js';

export default class SandboxPool extends BaseCommand {
  static override summary = "Show the code sandbox's warm pool";
  static override examples = ['<%= config.bin %> sandbox pool', '<%= config.bin %> sandbox pool --json'];

  async run() {
    const { flags } = await this.parse(SandboxPool);
    const stats = await poolStats(await sandboxClient(flags.context));
    this.fields(stats, ['warm', 'target', 'in_flight', 'created_total']);
    return stats;
  }
}
