import { Args } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { confirm, yesFlag } from '../../cli/flags.js';
import { projectFlag, projectQuery } from '../../cli/agent-flags.js';
import { embedRoutes } from '../../api/embed.js';

export default class EmbedDelete extends BaseCommand {
  static override summary = "Disable an agent's web widget (its key stops working)";
  static override examples = ['<%= config.bin %> embed delete hello'];
  static override args = { name: Args.string({ description: 'agent name', required: true }) };
  static override flags = { project: projectFlag, yes: yesFlag };

  async run() {
    const { args, flags } = await this.parse(EmbedDelete);
    await confirm(flags.yes, `delete the web widget of ${args.name} (pages that embed it stop working)`);
    const res = await (await this.client()).call(embedRoutes.delete, { params: { name: args.name }, query: projectQuery(flags.project, flags.context) });
    this.print(`disabled the widget of ${res.agent}`);
    return res;
  }
}
