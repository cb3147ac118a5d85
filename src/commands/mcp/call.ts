import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag } from '../../cli/flags.js';
import { serverArg } from '../../cli/mcp.js';
import { ask } from '../../cli/prompt.js';
import { mcpRoutes, type McpTool } from '../../api/mcp.js';
import { argSchemas, callTool, coerceArg, contentText, explain, parseArgsJson, splitArgPairs, type ArgSchemas } from '../../client/mcp.js';
import { UsageError } from '../../client/errors.js';

export default class McpCall extends BaseCommand {
  static override summary = 'Call a tool of the running version, through the platform (the bearer never leaves it)';
  static override description =
    'Prints the text the tool returned. A tool error (the tool raised, a secret was missing, the call timed out) prints its text on stderr and exits 1. Each --arg KEY=VALUE is read as the tool\'s input schema types KEY: a string parameter takes the text as it is (zip=01234 stays "01234"), integer, number and boolean parameters parse it (a value that does not parse stops the command with exit 2 before the call), array and object parameters take JSON; a KEY the schema does not describe is JSON when it parses (1, true, [1,2], {"a":1}, "quoted") and text otherwise. --args gives them all as one JSON object, sent as it is; --arg values win. Without TOOL on a terminal, pick the tool from a list and type its arguments.';
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
    // Malformed pairs and --args stop here, before any request.
    const pairs = splitArgPairs(flags.arg);
    const given = parseArgsJson(flags.args);
    const client = await this.client();
    let tool = args.tool;
    let tools: McpTool[] | undefined;
    const listTools = async () => (tools ??= (await client.call(mcpRoutes.tools, { params: { projectID, name: args.server } }).catch((e: unknown) => explain(e, { server: args.server }))).tools);
    let picked: McpTool | undefined;
    if (!tool) {
      if (this.jsonEnabled() || !process.stdin.isTTY) {
        throw new UsageError('TOOL is required without a terminal', `pass it: \`${this.config.bin} mcp call ${args.server} TOOL\` (see \`${this.config.bin} mcp tools list ${args.server}\`)`);
      }
      picked = await pickTool(args.server, await listTools());
      tool = picked.name;
    }
    // The schema types each --arg (a string parameter keeps "123" a string); a tool the list does
    // not name (a module exposing other names) keeps the JSON-if-it-parses rule.
    const schemas: ArgSchemas | undefined = pairs.length ? argSchemas((picked ?? (await listTools()).find((t) => t.name === tool))?.schema) : undefined;
    let callArgs: Record<string, unknown> = { ...given };
    for (const [key, text] of pairs) callArgs[key] = coerceArg(key, text, schemas?.[key]);
    if (picked && !pairs.length && flags.args === undefined) callArgs = await askArguments(picked);
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
  const props = (tool.schema.properties ?? {}) as Record<string, { type?: unknown; description?: string; default?: unknown; enum?: unknown[] } & Record<string, unknown>>;
  const required = new Set((tool.schema.required ?? []) as string[]);
  const out: Record<string, unknown> = {};
  for (const [name, p] of Object.entries(props)) {
    const hint = [p.enum ? p.enum.map((v) => JSON.stringify(v)).join('|') : p.type ? String(p.type) : undefined, required.has(name) ? 'required' : p.default !== undefined ? `default ${JSON.stringify(p.default)}` : 'optional'];
    if (p.description) process.stderr.write(`  ${name}: ${p.description}\n`);
    for (;;) {
      const answer = await ask(`${name} (${hint.filter(Boolean).join(', ')}): `);
      if (answer === '' && required.has(name)) continue;
      if (answer !== '') {
        try {
          out[name] = coerceArg(name, answer, p);
        } catch (e) {
          // Typed like --arg: a value that does not fit the type is asked again.
          process.stderr.write(`${(e as Error).message.replace(/^--arg /, '')}\n`);
          continue;
        }
      }
      break;
    }
  }
  return out;
}
