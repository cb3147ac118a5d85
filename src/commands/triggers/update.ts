import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag } from '../../cli/flags.js';
import { triggerArg, triggerFields, triggerFlags } from '../../cli/triggers.js';
import { triggerRoutes } from '../../api/triggers.js';
import { callTrigger, patchFromFlags } from '../../client/triggers.js';

export default class TriggersUpdate extends BaseCommand {
  static override summary = 'Change a trigger: its target or path, its source (replaced whole), its retry';
  static override examples = ["<%= config.bin %> triggers update nightly --cron '30 4 * * *' --tz UTC", '<%= config.bin %> triggers update on-order --max-attempts 10 --json'];
  static override args = { name: triggerArg };
  static override flags = { project: projectFlag, ...triggerFlags({ update: true }) };

  async run() {
    const { args, flags } = await this.parse(TriggersUpdate);
    const body = patchFromFlags(flags);
    const projectID = this.projectRef(flags.project, flags.context);
    const t = await callTrigger((await this.client()).call(triggerRoutes.patch, { params: { projectID, name: args.name }, body }), args.name);
    this.fields(triggerFields(t));
    return t;
  }
}
