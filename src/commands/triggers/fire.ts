import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag } from '../../cli/flags.js';
import { triggerArg } from '../../cli/triggers.js';
import { triggerRoutes } from '../../api/triggers.js';
import { callTrigger } from '../../client/triggers.js';

export default class TriggersFire extends BaseCommand {
  static override summary = 'Fire a trigger once now, for testing (a schedule sends its payload); see the outcome with `triggers get`';
  static override examples = ['<%= config.bin %> triggers fire nightly', '<%= config.bin %> triggers fire nightly --json'];
  static override args = { name: triggerArg };
  static override flags = { project: projectFlag };

  async run() {
    const { args, flags } = await this.parse(TriggersFire);
    const projectID = this.projectRef(flags.project, flags.context);
    const client = await this.client();
    const path = await callTrigger(client.pathFor(triggerRoutes.fire, { projectID, name: args.name }), args.name);
    const f = (await (await callTrigger(client.request('POST', path), args.name)).json()) as { id: string; status: string };
    this.print(`fired ${args.name} (firing ${f.id}, ${f.status}); follow it with \`${this.config.bin} triggers get ${args.name}\``);
    return f;
  }
}
