import { Args } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag, projectQuery } from '../../cli/agent-flags.js';
import { embedRoutes } from '../../api/embed.js';

export default class EmbedSnippet extends BaseCommand {
  static override summary = "Print the one-line HTML that embeds an agent's widget in a page";
  static override examples = ['<%= config.bin %> embed snippet hello >> index.html'];
  static override args = { name: Args.string({ description: 'agent name', required: true }) };
  static override flags = { project: projectFlag };

  async run() {
    const { args, flags } = await this.parse(EmbedSnippet);
    const res = await (await this.client()).call(embedRoutes.get, { params: { name: args.name }, query: projectQuery(flags.project, flags.context) });
    this.print(res.snippet);
    return { agent: res.agent, snippet: res.snippet };
  }
}
