import { BaseCommand } from '../../cli/base-command.js';
import { confirm, projectFlag, yesFlag } from '../../cli/flags.js';
import { serviceArg } from '../../cli/services.js';
import { serverlessRoutes } from '../../api/serverless.js';
import { call } from '../../client/services.js';
import { UsageError } from '../../client/errors.js';

export default class ServicesDelete extends BaseCommand {
  static override summary = 'Delete a service with its revisions and instances, releasing its address (project admin; irreversible)';
  static override examples = ['<%= config.bin %> services delete hello', '<%= config.bin %> services delete hello --yes --json'];
  static override args = { name: serviceArg };
  static override flags = { project: projectFlag, yes: yesFlag };

  async run() {
    const { args, flags } = await this.parse(ServicesDelete);
    // --json never prompts, and never confirms on the user's behalf either.
    if (this.jsonEnabled() && !flags.yes) throw new UsageError(`deleting ${args.name} needs confirmation`, 'pass --yes');
    await confirm(flags.yes, `delete service ${args.name} with all its revisions`);
    const projectID = this.projectRef(flags.project, flags.context);
    const client = await this.client();
    // 204: no body to parse.
    const path = await call(client.pathFor(serverlessRoutes.delete, { projectID, name: args.name }), { name: args.name });
    await call(client.request('DELETE', path), { name: args.name });
    this.print(`deleted ${args.name}`);
    return { name: args.name, deleted: true };
  }
}
