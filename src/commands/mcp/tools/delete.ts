import { Args } from '@oclif/core';
import { BaseCommand } from '../../../cli/base-command.js';
import { confirm, projectFlag, yesFlag } from '../../../cli/flags.js';
import { serverArg, waitFlags, waitWithProgress } from '../../../cli/mcp.js';
import { deleteTool } from '../../../client/mcp.js';
import { UsageError } from '../../../client/errors.js';

export default class McpToolsDelete extends BaseCommand {
  static override summary = 'Remove a tool: the server builds a new version without it (project admin)';
  static override examples = ['<%= config.bin %> mcp tools delete weather forecast', '<%= config.bin %> mcp tools delete weather forecast --yes --wait --json'];
  static override args = { server: serverArg, tool: Args.string({ description: 'tool name', required: true }) };
  static override flags = { project: projectFlag, yes: yesFlag, ...waitFlags };

  async run() {
    const { args, flags } = await this.parse(McpToolsDelete);
    if (this.jsonEnabled() && !flags.yes) throw new UsageError(`removing ${args.tool} needs confirmation`, 'pass --yes');
    await confirm(flags.yes, `remove tool ${args.tool} from ${args.server} (a new version without it)`);
    const projectID = this.projectRef(flags.project, flags.context);
    const client = await this.client();
    const ref = { projectID, server: args.server };
    const res = await deleteTool(client, ref, args.tool);
    this.print(`removed ${res.name} from ${res.server}${res.version ? `: version ${res.version}` : ''} (build ${res.build_id})`);
    if (!flags.wait) return res;
    const server = await waitWithProgress(client, ref, res.version, { json: this.jsonEnabled(), verbose: flags.verbose, timeout: flags.timeout });
    this.print(`${server.name} is ready: version ${server.version} with ${server.tool_names.join(', ') || 'no tools'}`);
    return { ...res, mcp_server: server };
  }
}
