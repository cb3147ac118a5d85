import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag } from '../../cli/flags.js';
import { serverArg, serverFields } from '../../cli/mcp.js';
import { mcpRoutes } from '../../api/mcp.js';
import { explain } from '../../client/mcp.js';

export default class McpGet extends BaseCommand {
  static override summary = 'Show one MCP server: state, running version, tools and endpoint (never its bearer)';
  static override examples = ['<%= config.bin %> mcp get weather', '<%= config.bin %> mcp get weather --json'];
  static override args = { server: serverArg };
  static override flags = { project: projectFlag };

  async run() {
    const { args, flags } = await this.parse(McpGet);
    const projectID = this.projectRef(flags.project, flags.context);
    const res = await (await this.client()).call(mcpRoutes.get, { params: { projectID, name: args.server } }).catch((e: unknown) => explain(e, { server: args.server }));
    const s = res.mcp_server;
    this.fields(serverFields(s));
    if (!s.tool_count && s.state === 'pending') this.note(`\nnothing to serve yet: publish a tool with \`${this.config.bin} mcp tools publish ${s.name} FILE.py --wait\``);
    else if (s.state === 'failed') this.note(`\nthe last build failed; see \`${this.config.bin} mcp versions ${s.name}\``);
    return res;
  }
}
