import { gatewayRoutes } from '../../../api/gateway.js';
import { BaseCommand } from '../../../cli/base-command.js';
import { projectFlag } from '../../../cli/flags.js';
import { endpointArg, keyColumns } from '../../../cli/gateway.js';
import { explain } from '../../../client/gateway.js';

export default class GatewayKeysList extends BaseCommand {
  static override summary = "An endpoint's keys (metadata only: secrets are never shown again)";
  static override examples = ['<%= config.bin %> gateway keys list api', '<%= config.bin %> gateway keys list api --json'];
  static override args = { endpoint: endpointArg };
  static override flags = { project: projectFlag };

  async run() {
    const { args, flags } = await this.parse(GatewayKeysList);
    const projectID = this.projectRef(flags.project, flags.context);
    const res = await (await this.client()).call(gatewayRoutes.keys, { params: { projectID, name: args.endpoint } }).catch((e: unknown) => explain(e, { endpoint: args.endpoint }));
    this.table(res.keys, keyColumns, `no keys; create one with \`${this.config.bin} gateway keys create ${args.endpoint}\``);
    return res;
  }
}
