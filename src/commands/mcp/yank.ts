import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag } from '../../cli/flags.js';
import { serverArg, versionArg } from '../../cli/mcp.js';
import { mcpRoutes } from '../../api/mcp.js';
import { explain } from '../../client/mcp.js';

export default class McpYank extends BaseCommand {
  static override summary = 'Retire a version as a rollback target; it is kept and listed (project admin; not the running one)';
  static override examples = ['<%= config.bin %> mcp yank weather 3', '<%= config.bin %> mcp yank weather 3 --json'];
  static override args = { server: serverArg, version: versionArg };
  static override flags = { project: projectFlag };

  async run() {
    const { args, flags } = await this.parse(McpYank);
    const projectID = this.projectRef(flags.project, flags.context);
    const res = await (await this.client())
      .call(mcpRoutes.yank, { params: { projectID, name: args.server, version: args.version } })
      .catch((e: unknown) => explain(e, { server: args.server, version: args.version }));
    this.print(`${res.server} version ${res.version} is yanked: no rollback to it until \`${this.config.bin} mcp unyank ${res.server} ${res.version}\``);
    return res;
  }
}
