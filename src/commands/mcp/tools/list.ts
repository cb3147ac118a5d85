import { BaseCommand } from '../../../cli/base-command.js';
import { projectFlag } from '../../../cli/flags.js';
import { serverArg } from '../../../cli/mcp.js';
import { mcpRoutes } from '../../../api/mcp.js';
import { explain } from '../../../client/mcp.js';

export default class McpToolsList extends BaseCommand {
  static override summary = "List an MCP server's current tools (--json adds each input schema and module source)";
  static override examples = ['<%= config.bin %> mcp tools list weather', '<%= config.bin %> mcp tools list weather --json'];
  static override args = { server: serverArg };
  static override flags = { project: projectFlag };

  async run() {
    const { args, flags } = await this.parse(McpToolsList);
    const projectID = this.projectRef(flags.project, flags.context);
    const res = await (await this.client()).call(mcpRoutes.tools, { params: { projectID, name: args.server } }).catch((e: unknown) => explain(e, { server: args.server }));
    this.table(
      res.tools,
      [
        { header: 'name', get: (t) => t.name },
        { header: 'description', get: (t) => firstLine(t.description, 70) },
        { header: 'credential keys', get: (t) => t.credential_keys },
        { header: 'updated', get: (t) => t.updated_at },
      ],
      `no tools; publish one with \`${this.config.bin} mcp tools publish ${args.server} FILE.py\``,
    );
    return res;
  }
}

const firstLine = (text: string, max: number) => {
  const line = text.split('\n')[0]!.trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
};
