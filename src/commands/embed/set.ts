import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag, projectQuery } from '../../cli/agent-flags.js';
import { embedRoutes } from '../../api/embed.js';

export default class EmbedSet extends BaseCommand {
  static override summary = "Enable or replace an agent's web widget (prints the HTML snippet)";
  static override examples = ['<%= config.bin %> embed set hello --origin https://shop.example --greeting "Hi!" --title Help --color "#0055ff"'];
  static override args = { name: Args.string({ description: 'agent name', required: true }) };
  static override flags = {
    project: projectFlag,
    origin: Flags.string({ description: 'allowed page origin, scheme://host[:port] (repeatable)', required: true, multiple: true }),
    greeting: Flags.string({ description: 'first message the widget shows' }),
    title: Flags.string({ description: 'widget title' }),
    color: Flags.string({ description: 'title bar colour, #rrggbb' }),
    position: Flags.string({ description: 'corner of the page', options: ['bottom-right', 'bottom-left'] }),
    'rate-limit': Flags.integer({ description: 'requests a minute per visitor address (1-600, default 20)', min: 1, max: 600 }),
  };

  async run() {
    const { args, flags } = await this.parse(EmbedSet);
    const theme = { title: flags.title, color: flags.color, position: flags.position as 'bottom-right' | 'bottom-left' | undefined };
    const res = await (await this.client()).call(embedRoutes.put, {
      params: { name: args.name },
      query: projectQuery(flags.project, flags.context),
      body: { allowed_origins: flags.origin, greeting: flags.greeting, theme: Object.values(theme).some((v) => v !== undefined) ? theme : undefined, rate_limit_per_minute: flags['rate-limit'] },
    });
    this.print(res.snippet);
    this.note(`widget of ${res.agent} allows ${res.allowed_origins.join(', ')}`);
    return res;
  }
}
