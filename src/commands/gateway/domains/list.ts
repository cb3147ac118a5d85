import { gatewayRoutes } from '../../../api/gateway.js';
import { BaseCommand } from '../../../cli/base-command.js';
import { pageFlags, pageQuery, projectFlag } from '../../../cli/flags.js';
import { domainColumns } from '../../../cli/gateway.js';
import { explain } from '../../../client/gateway.js';

export default class GatewayDomainsList extends BaseCommand {
  static override summary = "A project's claimed hostnames and whether each is verified";
  static override examples = ['<%= config.bin %> gateway domains list', '<%= config.bin %> gateway domains list --json'];
  static override flags = { project: projectFlag, ...pageFlags };

  async run() {
    const { flags } = await this.parse(GatewayDomainsList);
    const projectID = this.projectRef(flags.project, flags.context);
    const res = await (await this.client()).call(gatewayRoutes.domains, { params: { projectID }, query: pageQuery(flags) }).catch((e: unknown) => explain(e, {}));
    this.table(res.domains, domainColumns, `no domains; claim one with \`${this.config.bin} gateway domains claim HOSTNAME\``);
    if (res.next_page_token) this.note(`more: --page-token ${res.next_page_token}`);
    return res;
  }
}
