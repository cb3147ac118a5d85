import { Args } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag, projectQuery } from '../../cli/agent-flags.js';
import { embedRoutes } from '../../api/embed.js';

export default class EmbedGet extends BaseCommand {
  static override summary = "Show an agent's web widget: key, allowed origins, greeting, theme, rate limit";
  static override examples = ['<%= config.bin %> embed get hello'];
  static override args = { name: Args.string({ description: 'agent name', required: true }) };
  static override flags = { project: projectFlag };

  async run() {
    const { args, flags } = await this.parse(EmbedGet);
    const res = await (await this.client()).call(embedRoutes.get, { params: { name: args.name }, query: projectQuery(flags.project, flags.context) });
    this.fields({ ...res, allowed_origins: res.allowed_origins.join(', '), theme: JSON.stringify(res.theme) }, ['agent', 'key', 'allowed_origins', 'greeting', 'theme', 'rate_limit_per_minute', 'snippet']);
    return res;
  }
}
