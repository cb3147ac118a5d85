import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag } from '../../cli/flags.js';
import { firingColumns, triggerArg, triggerFields } from '../../cli/triggers.js';
import { formatTable } from '../../cli/render.js';
import { triggerRoutes } from '../../api/triggers.js';
import { callTrigger } from '../../client/triggers.js';

export default class TriggersGet extends BaseCommand {
  static override summary = 'Show one trigger and its firing history (newest first): times, attempts, status, duration, error';
  static override examples = ['<%= config.bin %> triggers get nightly', '<%= config.bin %> triggers get nightly --json'];
  static override args = { name: triggerArg };
  static override flags = { project: projectFlag };

  async run() {
    const { args, flags } = await this.parse(TriggersGet);
    const projectID = this.projectRef(flags.project, flags.context);
    const t = await callTrigger((await this.client()).call(triggerRoutes.get, { params: { projectID, name: args.name } }), args.name);
    this.fields(triggerFields(t));
    this.print(`\n${formatTable(t.firings ?? [], firingColumns, `no firings yet; fire one now with \`${this.config.bin} triggers fire ${t.name}\``)}`);
    return t;
  }
}
