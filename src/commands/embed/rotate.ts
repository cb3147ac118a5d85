import { Args } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag, projectQuery } from '../../cli/agent-flags.js';
import { embedRoutes } from '../../api/embed.js';

export default class EmbedRotate extends BaseCommand {
  static override summary = "Replace an agent's widget key (the old one stops working at once); prints the new snippet";
  static override examples = ['<%= config.bin %> embed rotate hello'];
  static override args = { name: Args.string({ description: 'agent name', required: true }) };
  static override flags = { project: projectFlag };

  async run() {
    const { args, flags } = await this.parse(EmbedRotate);
    const res = await (await this.client()).call(embedRoutes.rotateKey, { params: { name: args.name }, query: projectQuery(flags.project, flags.context), body: {} });
    this.print(res.snippet);
    this.note('pages still using the old key must take the new snippet');
    return res;
  }
}
