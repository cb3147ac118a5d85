import { BaseCommand } from '../../cli/base-command.js';
import { pageFlags, pageQuery, projectFlag } from '../../cli/flags.js';
import { serverColumns } from '../../cli/mcp.js';
import { mcpRoutes } from '../../api/mcp.js';
import { explain } from '../../client/mcp.js';

export default class McpList extends BaseCommand {
  static override summary = "List a project's MCP servers";
  static override examples = ['<%= config.bin %> mcp list', '<%= config.bin %> mcp list --project shop-api --json'];
  static override flags = { project: projectFlag, ...pageFlags };

  async run() {
    const { flags } = await this.parse(McpList);
    const projectID = this.projectRef(flags.project, flags.context);
    const res = await (await this.client()).call(mcpRoutes.list, { params: { projectID }, query: pageQuery(flags) }).catch((e: unknown) => explain(e, {}));
    this.table(res.mcpservers, serverColumns, `no MCP servers; create one with \`${this.config.bin} mcp create NAME\``);
    if (res.next_page_token) this.note(`more: --page-token ${res.next_page_token}`);
    return res;
  }
}
