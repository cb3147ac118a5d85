import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag } from '../../cli/flags.js';
import { serverFields } from '../../cli/mcp.js';
import { mcpRoutes } from '../../api/mcp.js';
import { explain } from '../../client/mcp.js';

export default class McpCreate extends BaseCommand {
  static override summary = 'Create an MCP server (project admin); it serves once a tool is published';
  static override description =
    'A server is private unless --expose apps: private servers are reachable only from workloads of the platform (agents find them in MCP_SERVERS), exposed ones also get a public address on the apps domain. Clients always need the server\'s bearer, which never leaves the platform; try tools from the terminal with `platform mcp call`.';
  static override examples = [
    '<%= config.bin %> mcp create weather',
    '<%= config.bin %> mcp create public-tools --expose apps',
    '<%= config.bin %> mcp create weather --project shop-api --json',
  ];
  static override args = { name: Args.string({ description: 'server name (lowercase letters, digits and hyphens; 1-40, starting with a letter)', required: true }) };
  static override flags = {
    project: projectFlag,
    expose: Flags.string({ description: 'publish the server on the apps domain (default: private)', options: ['apps'] }),
  };

  async run() {
    const { args, flags } = await this.parse(McpCreate);
    const projectID = this.projectRef(flags.project, flags.context);
    const client = await this.client();
    const res = await client
      .call(mcpRoutes.create, { params: { projectID }, body: { name: args.name, expose: flags.expose ?? '' } })
      .catch((e: unknown) => explain(e, { server: args.name }));
    this.fields(serverFields(res.mcp_server));
    this.note(`\nnext: write a tool (\`${this.config.bin} init ${args.name} --template mcp-python\`), then \`${this.config.bin} mcp publish ${args.name} ${args.name} --wait\``);
    return res;
  }
}
