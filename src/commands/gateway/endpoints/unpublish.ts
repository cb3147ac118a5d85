import { gatewayRoutes } from '../../../api/gateway.js';
import { BaseCommand } from '../../../cli/base-command.js';
import { projectFlag } from '../../../cli/flags.js';
import { endpointArg, endpointFields } from '../../../cli/gateway.js';
import { explain } from '../../../client/gateway.js';

export default class GatewayEndpointsUnpublish extends BaseCommand {
  static override summary = 'Stop serving the endpoint (project admin); its address stays reserved';
  static override examples = ['<%= config.bin %> gateway endpoints unpublish api', '<%= config.bin %> gateway endpoints unpublish api --json'];
  static override args = { name: endpointArg };
  static override flags = { project: projectFlag };

  async run() {
    const { args, flags } = await this.parse(GatewayEndpointsUnpublish);
    const projectID = this.projectRef(flags.project, flags.context);
    const e = await (await this.client()).call(gatewayRoutes.unpublish, { params: { projectID, name: args.name } }).catch((err: unknown) => explain(err, { endpoint: args.name }));
    this.fields(endpointFields(e));
    return e;
  }
}
