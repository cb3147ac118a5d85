import { Args, Flags } from '@oclif/core';
import { cpSync, existsSync, readdirSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BaseCommand } from '../cli/base-command.js';
import { AbortError } from '../client/errors.js';
import { MCP_SERVER_NAME_RE } from '../api/mcp.js';

/** templates/ ships beside dist/ in the package. */
const TEMPLATES = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'templates');
export const TEMPLATE_NAMES = ['function-python', 'function-nodejs', 'function-go', 'function-ruby', 'agent-adk', 'agent-langgraph', 'agent-crewai', 'mcp-python'];

export default class Init extends BaseCommand {
  static override summary = 'Create a new agent, function or MCP tool folder from a template';
  static override examples = [
    '<%= config.bin %> init hello --template function-python',
    '<%= config.bin %> init my-agent --template agent-langgraph',
    '<%= config.bin %> init weather --template mcp-python',
  ];
  static override args = { dir: Args.string({ description: 'directory to create (or fill)', default: '.' }) };
  static override flags = { template: Flags.string({ char: 't', description: 'template', options: TEMPLATE_NAMES, default: 'function-python' }) };

  async run() {
    const { args, flags } = await this.parse(Init);
    const source = join(TEMPLATES, flags.template);
    const target = resolve(args.dir);
    const files = readdirSync(source);
    const clash = files.filter((f) => existsSync(join(target, f)));
    if (clash.length) throw new AbortError(`${args.dir} already has ${clash.join(', ')}`, 'choose an empty directory');
    cpSync(source, target, { recursive: true });
    this.print(`created ${flags.template} in ${args.dir}: ${files.join(', ')}`);
    // An MCP folder is published to a server, not deployed (spec 2 §4.2).
    if (flags.template.startsWith('mcp-')) {
      const slug = basename(target).toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/^[^a-z]+|-+$/g, '').slice(0, 40);
      const server = MCP_SERVER_NAME_RE.test(slug) ? slug : 'NAME';
      this.print(`next: ${this.config.bin} mcp create ${server} && ${this.config.bin} mcp publish ${server} ${args.dir} --wait`);
    } else this.print(`next: ${this.config.bin} deploy ${args.dir}`);
    return { template: flags.template, dir: target, files };
  }
}
