import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../../cli/base-command.js';
import { projectFlag } from '../../../cli/flags.js';
import { serverArg, waitFlags, waitWithProgress } from '../../../cli/mcp.js';
import { publishBody, publishTool, readSchemaFile, toolNameOf } from '../../../client/mcp.js';

export default class McpToolsPublish extends BaseCommand {
  static override summary = 'Publish one tool module; the whole tool set becomes a new version, built and rolled out (project admin)';
  static override description =
    'FILE.py is a whole Python module declaring its function with @tool (from platform_mcp import tool); the input schema and description derive from the signature and docstring unless --schema or --description is given. Secrets named by --credential-key are fetched on every call and handed to the function\'s `credentials` parameter; declaring a key does not create the secret (`platform secrets set KEY`). Publishing again under the same name replaces the tool in a new version; earlier versions stay available to `platform mcp rollback`.';
  static override examples = [
    '<%= config.bin %> mcp tools publish weather forecast.py --wait',
    '<%= config.bin %> mcp tools publish weather tools/lookup.py --name city_lookup --credential-key geo-api-key',
    '<%= config.bin %> mcp tools publish weather forecast.py --schema forecast.schema.json --description "Forecast for a city" --json',
  ];
  static override args = { server: serverArg, file: Args.string({ description: 'Python module holding the tool', required: true }) };
  static override flags = {
    project: projectFlag,
    name: Flags.string({ description: 'tool name (default: the file name without .py)' }),
    description: Flags.string({ description: 'tool description (default: the docstring)' }),
    schema: Flags.string({ description: 'JSON file with the input JSON Schema (default: derived from the signature)' }),
    'credential-key': Flags.string({ description: 'secret the tool reads on each call (repeatable)', multiple: true }),
    ...waitFlags,
  };

  async run() {
    const { args, flags } = await this.parse(McpToolsPublish);
    const projectID = this.projectRef(flags.project, flags.context);
    const tool = toolNameOf(args.file, flags.name);
    const body = publishBody(args.file, {
      description: flags.description,
      schema: flags.schema ? readSchemaFile(flags.schema) : undefined,
      credential_keys: flags['credential-key'],
    });
    const client = await this.client();
    const ref = { projectID, server: args.server };
    const res = await publishTool(client, ref, tool, body);
    this.print(`published ${res.name} to ${res.server}${res.version ? `: version ${res.version}` : ''} (build ${res.build_id})`);
    if (!flags.wait) {
      this.note(`building; follow it with \`${this.config.bin} mcp get ${res.server}\` (or publish with --wait)`);
      return res;
    }
    const server = await waitWithProgress(client, ref, res.version, { json: this.jsonEnabled(), verbose: flags.verbose, timeout: flags.timeout });
    this.print(`${server.name} is ready: version ${server.version} with ${server.tool_names.join(', ')}`);
    this.print(`  try it: ${this.config.bin} mcp call ${server.name} ${tool}`);
    return { ...res, mcp_server: server };
  }
}
