import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag } from '../../cli/flags.js';
import { serverArg, versionArg } from '../../cli/mcp.js';
import { mcpRoutes } from '../../api/mcp.js';
import { explain } from '../../client/mcp.js';

export default class McpUnyank extends BaseCommand {
  static override summary = 'Make a yanked version a rollback target again (project admin)';
  static override examples = ['<%= config.bin %> mcp unyank weather 3', '<%= config.bin %> mcp unyank weather 3 --json'];
  static override args = { server: serverArg, version: versionArg };
  static override flags = { project: projectFlag };

  async run() {
    const { args, flags } = await this.parse(McpUnyank);
    const projectID = this.projectRef(flags.project, flags.context);
    const res = await (await this.client())
      .call(mcpRoutes.unyank, { params: { projectID, name: args.server, version: args.version } })
      .catch((e: unknown) => explain(e, { server: args.server, version: args.version }));
    this.print(`${res.server} version ${res.version} can be rolled back to again`);
    return res;
  }
}
