import { BaseCommand } from '../../cli/base-command.js';
import { confirm, projectFlag, yesFlag } from '../../cli/flags.js';
import { serverArg } from '../../cli/mcp.js';
import { mcpRoutes } from '../../api/mcp.js';
import { explain } from '../../client/mcp.js';
import { UsageError } from '../../client/errors.js';

export default class McpDelete extends BaseCommand {
  static override summary = 'Delete an MCP server with all its versions and instances (project admin; irreversible)';
  static override examples = ['<%= config.bin %> mcp delete weather', '<%= config.bin %> mcp delete weather --yes --json'];
  static override args = { server: serverArg };
  static override flags = { project: projectFlag, yes: yesFlag };

  async run() {
    const { args, flags } = await this.parse(McpDelete);
    // --json never prompts, and never confirms on the user's behalf either.
    if (this.jsonEnabled() && !flags.yes) throw new UsageError(`deleting ${args.server} needs confirmation`, 'pass --yes');
    await confirm(flags.yes, `delete MCP server ${args.server} with all its versions`);
    const projectID = this.projectRef(flags.project, flags.context);
    const res = await (await this.client()).call(mcpRoutes.delete, { params: { projectID, name: args.server } }).catch((e: unknown) => explain(e, { server: args.server }));
    this.print(`deleted ${res.name}`);
    return res;
  }
}
