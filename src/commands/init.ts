import { Args, Flags } from '@oclif/core';
import { canDrawUi } from '../cli/terminal.js';
import { existsSync, readdirSync } from 'node:fs';
import { BaseCommand } from '../cli/base-command.js';
import { createFromTemplate, TEMPLATE_NAMES, type Created } from '../cli/init-templates.js';
import { AbortError, UsageError } from '../client/errors.js';
import { AGENT_NAME_RE } from '../api/agents.js';
import type { InitChoice } from '../tui/InitPicker.js';

export default class Init extends BaseCommand {
  static override summary = 'Create a new agent, function or MCP tool folder from a template';
  static override description =
    'On a terminal, `platform init` alone asks for the name, the kind (function, agent, MCP tools) and the runtime or framework. Every template has a README (how to deploy, invoke and run `platform dev`) and a .gitignore, and deploys as generated. Without a terminal, pass the folder and --template; a folder without --template gets function-python.';
  static override examples = [
    '<%= config.bin %> init',
    '<%= config.bin %> init hello --template function-python',
    '<%= config.bin %> init my-agent --template agent-langgraph',
    '<%= config.bin %> init weather --template mcp-python',
  ];
  static override args = { dir: Args.string({ description: 'directory to create (or fill); `.` with --template alone' }) };
  static override flags = { template: Flags.string({ char: 't', description: 'template (asked on a terminal when missing)', options: TEMPLATE_NAMES }) };

  async run() {
    const { args, flags } = await this.parse(Init);
    const interactive = canDrawUi() && !this.jsonEnabled();
    let dir = args.dir ?? '.';
    let template = flags.template;
    if (!template && interactive) {
      const choice = await this.pick(args.dir);
      dir = choice.name;
      template = choice.template;
    } else if (!template && !args.dir) {
      throw new UsageError(
        'init needs a folder and a template when it cannot ask (stdin or stdout is not a terminal)',
        `pass DIR --template TEMPLATE, e.g. \`${this.config.bin} init hello --template function-python\` (templates: ${TEMPLATE_NAMES.join(', ')})`,
      );
    }
    const created: Created = createFromTemplate(template ?? 'function-python', dir, this.config.bin);
    this.print(`created ${created.template} in ${dir}: ${created.files.join(', ')}`);
    this.print(`next: ${created.next}`);
    return created;
  }

  /** The picker, loaded only here: ink and react cost start-up time every other init would pay. */
  private async pick(given: string | undefined): Promise<InitChoice> {
    // The picker's UI (ink, react) loads only when it is drawn.
    // react is CommonJS: its dynamic import is the module as `default` (bundled or not).
    const [{ render }, { default: React }, { InitPicker }] = await Promise.all([import('ink'), import('react'), import('../tui/InitPicker.js')]);
    let choice: InitChoice | undefined;
    const app = render(
      React.createElement(InitPicker, {
        name: given,
        defaultName: 'hello',
        checkName: (name: string) => {
          if (!AGENT_NAME_RE.test(name)) return 'use lowercase letters, digits and hyphens, starting with a letter (it is also the name it deploys as)';
          if (existsSync(name) && readdirSync(name).length) return `${name} already exists and is not empty`;
          return undefined;
        },
        onDone: (c: InitChoice | undefined) => (choice = c),
      }),
      { exitOnCtrlC: true },
    );
    await app.waitUntilExit();
    if (!choice) throw new AbortError('init cancelled: nothing was created');
    return choice;
  }
}
