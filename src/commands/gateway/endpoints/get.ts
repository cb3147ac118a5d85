import { gatewayRoutes } from '../../../api/gateway.js';
import { BaseCommand } from '../../../cli/base-command.js';
import { projectFlag } from '../../../cli/flags.js';
import { endpointArg, endpointFields } from '../../../cli/gateway.js';
import { explain } from '../../../client/gateway.js';

export default class GatewayEndpointsGet extends BaseCommand {
  static override summary = 'One endpoint with its keys (metadata) and its custom domain';
  static override examples = ['<%= config.bin %> gateway endpoints get api', '<%= config.bin %> gateway endpoints get api --json'];
  static override args = { name: endpointArg };
  static override flags = { project: projectFlag };

  async run() {
    const { args, flags } = await this.parse(GatewayEndpointsGet);
    const projectID = this.projectRef(flags.project, flags.context);
    const e = await (await this.client()).call(gatewayRoutes.get, { params: { projectID, name: args.name } }).catch((err: unknown) => explain(err, { endpoint: args.name }));
    this.fields(endpointFields(e));
    return e;
  }
}
