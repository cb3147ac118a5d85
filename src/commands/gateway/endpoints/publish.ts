import { gatewayRoutes } from '../../../api/gateway.js';
import { BaseCommand } from '../../../cli/base-command.js';
import { projectFlag } from '../../../cli/flags.js';
import { endpointArg, endpointFields } from '../../../cli/gateway.js';
import { explain } from '../../../client/gateway.js';

export default class GatewayEndpointsPublish extends BaseCommand {
  static override summary = 'Serve the endpoint at its address (project admin); an apikey endpoint needs a live key first';
  static override examples = ['<%= config.bin %> gateway endpoints publish api', '<%= config.bin %> gateway endpoints publish api --json'];
  static override args = { name: endpointArg };
  static override flags = { project: projectFlag };

  async run() {
    const { args, flags } = await this.parse(GatewayEndpointsPublish);
    const projectID = this.projectRef(flags.project, flags.context);
    const e = await (await this.client()).call(gatewayRoutes.publish, { params: { projectID, name: args.name } }).catch((err: unknown) => explain(err, { endpoint: args.name }));
    this.fields(endpointFields(e));
    return e;
  }
}
