import { BaseCommand } from '../../cli/base-command.js';
import { confirm, projectFlag, yesFlag } from '../../cli/flags.js';
import { triggerArg } from '../../cli/triggers.js';
import { triggerRoutes } from '../../api/triggers.js';
import { callTrigger } from '../../client/triggers.js';
import { UsageError } from '../../client/errors.js';

export default class TriggersDelete extends BaseCommand {
  static override summary = 'Delete a trigger with its pending deliveries and history';
  static override examples = ['<%= config.bin %> triggers delete nightly', '<%= config.bin %> triggers delete nightly --yes --json'];
  static override args = { name: triggerArg };
  static override flags = { project: projectFlag, yes: yesFlag };

  async run() {
    const { args, flags } = await this.parse(TriggersDelete);
    if (this.jsonEnabled() && !flags.yes) throw new UsageError(`deleting ${args.name} needs confirmation`, 'pass --yes');
    await confirm(flags.yes, `delete trigger ${args.name}`);
    const projectID = this.projectRef(flags.project, flags.context);
    const client = await this.client();
    const path = await callTrigger(client.pathFor(triggerRoutes.delete, { projectID, name: args.name }), args.name);
    await callTrigger(client.request('DELETE', path), args.name);
    this.print(`deleted ${args.name}`);
    return { name: args.name, deleted: true };
  }
}
