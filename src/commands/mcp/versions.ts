import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag } from '../../cli/flags.js';
import { serverArg, versionColumns } from '../../cli/mcp.js';
import { mcpRoutes } from '../../api/mcp.js';
import { explain } from '../../client/mcp.js';

export default class McpVersions extends BaseCommand {
  static override summary = "List an MCP server's versions, newest first (each publish or tool delete makes one)";
  static override examples = ['<%= config.bin %> mcp versions weather', '<%= config.bin %> mcp versions weather --json'];
  static override args = { server: serverArg };
  static override flags = { project: projectFlag };

  async run() {
    const { args, flags } = await this.parse(McpVersions);
    const projectID = this.projectRef(flags.project, flags.context);
    const res = await (await this.client()).call(mcpRoutes.versions, { params: { projectID, name: args.server } }).catch((e: unknown) => explain(e, { server: args.server }));
    this.table(res.versions, versionColumns, `no versions yet; publish a tool with \`${this.config.bin} mcp tools publish ${args.server} FILE.py\``);
    for (const v of res.versions.filter((x) => x.state === 'failed' && x.message)) this.note(`version ${v.version} failed: ${v.message!.replace(/^version \d+ failed( to build)?: /, '').split('\n')[0]}`);
    return res;
  }
}
