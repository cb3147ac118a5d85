import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag } from '../../cli/flags.js';
import { serverArg, versionArg, waitFlags, waitWithProgress } from '../../cli/mcp.js';
import { mcpRoutes } from '../../api/mcp.js';
import { explain } from '../../client/mcp.js';

export default class McpRollback extends BaseCommand {
  static override summary = "Run an earlier version again from its recorded image, without a rebuild (project admin)";
  static override description = 'The version must have built (state ready at some point) and must not be yanked (`platform mcp unyank` first).';
  static override examples = ['<%= config.bin %> mcp rollback weather 2', '<%= config.bin %> mcp rollback weather 2 --wait --json'];
  static override args = { server: serverArg, version: versionArg };
  static override flags = { project: projectFlag, ...waitFlags };

  async run() {
    const { args, flags } = await this.parse(McpRollback);
    const projectID = this.projectRef(flags.project, flags.context);
    const client = await this.client();
    const res = await client
      .call(mcpRoutes.rollback, { params: { projectID, name: args.server, version: args.version } })
      .catch((e: unknown) => explain(e, { server: args.server, version: args.version }));
    const server = flags.wait ? await waitWithProgress(client, { projectID, server: args.server }, res.version, { json: this.jsonEnabled(), verbose: flags.verbose, timeout: flags.timeout }) : undefined;
    this.print(`${res.server} now runs version ${res.version} (${res.image})`);
    this.note(res.note);
    return server ? { ...res, mcp_server: server } : res;
  }
}
