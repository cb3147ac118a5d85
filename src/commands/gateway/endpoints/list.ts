import { gatewayRoutes } from '../../../api/gateway.js';
import { BaseCommand } from '../../../cli/base-command.js';
import { pageFlags, pageQuery, projectFlag } from '../../../cli/flags.js';
import { endpointColumns } from '../../../cli/gateway.js';
import { explain } from '../../../client/gateway.js';

export default class GatewayEndpointsList extends BaseCommand {
  static override summary = "List a project's gateway endpoints (unpublished ones included)";
  static override examples = ['<%= config.bin %> gateway endpoints list', '<%= config.bin %> gateway endpoints list --project shop --json'];
  static override flags = { project: projectFlag, ...pageFlags };

  async run() {
    const { flags } = await this.parse(GatewayEndpointsList);
    const projectID = this.projectRef(flags.project, flags.context);
    const res = await (await this.client()).call(gatewayRoutes.list, { params: { projectID }, query: pageQuery(flags) }).catch((e: unknown) => explain(e, {}));
    this.table(res.endpoints, endpointColumns, `no endpoints; create one with \`${this.config.bin} gateway endpoints create NAME --target KIND/NAME\``);
    if (res.next_page_token) this.note(`more: --page-token ${res.next_page_token}`);
    return res;
  }
}
