import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag } from '../../cli/flags.js';
import { revisionColumns, serviceArg } from '../../cli/services.js';
import { serverlessRoutes } from '../../api/serverless.js';
import { call } from '../../client/services.js';

export default class ServicesRevisions extends BaseCommand {
  static override summary = "List a service's revisions, newest first: state, share of traffic, tag, instances and why one is not ready";
  static override examples = ['<%= config.bin %> services revisions hello', '<%= config.bin %> services revisions hello --json'];
  static override args = { name: serviceArg };
  static override flags = { project: projectFlag };

  async run() {
    const { args, flags } = await this.parse(ServicesRevisions);
    const projectID = this.projectRef(flags.project, flags.context);
    const res = await call((await this.client()).call(serverlessRoutes.revisions, { params: { projectID, name: args.name } }), { name: args.name });
    this.table(res.revisions, revisionColumns, `${args.name} has no revisions`);
    return res;
  }
}
