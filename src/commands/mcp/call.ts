import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag } from '../../cli/flags.js';
import { serverArg } from '../../cli/mcp.js';
import { ask } from '../../cli/prompt.js';
import { mcpRoutes, type McpTool } from '../../api/mcp.js';
import { callTool, contentText, explain, parseCallArgs, parseValue } from '../../client/mcp.js';
import { UsageError } from '../../client/errors.js';

export default class McpCall extends BaseCommand {
  static override summary = 'Call a tool of the running version, through the platform (the bearer never leaves it)';
  static override description =
    'Prints the text the tool returned. A tool error (the tool raised, a secret was missing, the call timed out) prints its text on stderr and exits 1. Each --arg KEY=VALUE is parsed as JSON when it parses (1, true, [1,2], {"a":1}, "quoted") and taken as a string otherwise; --args gives them all as one JSON object, --arg values win. Without TOOL on a terminal, pick the tool from a list and type its arguments.';
  static override examples = [
    '<%= config.bin %> mcp call weather forecast --arg city=Paris --arg days=3',
    `<%= config.bin %> mcp call calc add --args '{"a": 1, "b": 2}'`,
    '<%= config.bin %> mcp call weather',
    '<%= config.bin %> mcp call weather forecast --arg city=Oslo --json',
  ];
  static override args = { server: serverArg, tool: Args.string({ description: 'tool name (omit on a terminal to pick one)' }) };
  static override flags = {
    project: projectFlag,
    arg: Flags.string({ char: 'a', description: 'argument KEY=VALUE (repeatable)', multiple: true }),
    args: Flags.string({ description: 'all arguments as one JSON object' }),
  };

  async run() {
    const { args, flags } = await this.parse(McpCall);
    const projectID = this.projectRef(flags.project, flags.context);
    const ref = { projectID, server: args.server };
    let callArgs = parseCallArgs(flags.arg, flags.args);
    const client = await this.client();
    let tool = args.tool;
    if (!tool) {
      if (this.jsonEnabled() || !process.stdin.isTTY) {
        throw new UsageError('TOOL is required without a terminal', `pass it: \`${this.config.bin} mcp call ${args.server} TOOL\` (see \`${this.config.bin} mcp tools list ${args.server}\`)`);
      }
      const tools = (await client.call(mcpRoutes.tools, { params: { projectID, name: args.server } }).catch((e: unknown) => explain(e, { server: args.server }))).tools;
      const picked = await pickTool(args.server, tools);
      tool = picked.name;
      if (!flags.arg?.length && flags.args === undefined) callArgs = await askArguments(picked);
    }
    const res = await callTool(client, ref, tool, callArgs);
    const text = contentText(res);
    if (res.isError) {
      if (this.jsonEnabled()) this.logJson(res);
      else process.stderr.write(`${text || 'the tool failed without a message'}\n`);
      return this.exit(1);
    }
    this.print(text);
    return res;
  }
}

async function pickTool(server: string, tools: McpTool[]): Promise<McpTool> {
  if (!tools.length) throw new UsageError(`${server} has no tools`, `publish one with \`platform mcp tools publish ${server} FILE.py --wait\``);
  if (tools.length === 1) return tools[0]!;
  tools.forEach((t, i) => process.stderr.write(`  ${String(i + 1).padStart(2)}. ${t.name}${t.description ? `  ${t.description.split('\n')[0]}` : ''}\n`));
  for (;;) {
    const answer = (await ask(`tool [1-${tools.length} or name]: `)).trim();
    const hit = tools.find((t) => t.name === answer) ?? tools[Number(answer) - 1];
    if (hit && answer) return hit;
    process.stderr.write(`no tool "${answer}"\n`);
  }
}

/** One prompt per schema property; an empty answer leaves an optional one out. */
async function askArguments(tool: McpTool): Promise<Record<string, unknown>> {
  const props = (tool.schema.properties ?? {}) as Record<string, { type?: unknown; description?: string; default?: unknown; enum?: unknown[] }>;
  const required = new Set((tool.schema.required ?? []) as string[]);
  const out: Record<string, unknown> = {};
  for (const [name, p] of Object.entries(props)) {
    const hint = [p.enum ? p.enum.map((v) => JSON.stringify(v)).join('|') : p.type ? String(p.type) : undefined, required.has(name) ? 'required' : p.default !== undefined ? `default ${JSON.stringify(p.default)}` : 'optional'];
    if (p.description) process.stderr.write(`  ${name}: ${p.description}\n`);
    for (;;) {
      const answer = await ask(`${name} (${hint.filter(Boolean).join(', ')}): `);
      if (answer === '' && required.has(name)) continue;
      if (answer !== '') out[name] = p.type === 'string' ? answer : parseValue(answer);
      break;
    }
  }
  return out;
}
