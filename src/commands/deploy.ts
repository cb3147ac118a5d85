import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../cli/base-command.js';
import { projectFlag, projectQuery } from '../cli/agent-flags.js';
import { startSpinner } from '../cli/spinner.js';
import { deployDirectory } from '../client/deploy.js';
import { FRAMEWORKS, RUNTIMES } from '../api/agents.js';

export default class Deploy extends BaseCommand {
  static override summary = 'Deploy an agent or function from a directory';
  static override description =
    'Packs DIR (honouring .gitignore and .platformignore), uploads it, and waits until it is ready. Framework, runtime and name default to the platform.json a template wrote.';
  static override examples = [
    '<%= config.bin %> deploy',
    '<%= config.bin %> deploy ./hello --name hello --framework function --runtime python',
    '<%= config.bin %> deploy ./agent --framework adk --no-wait --json',
  ];
  static override args = { dir: Args.directory({ description: 'source directory', default: '.', exists: true }) };
  static override flags = {
    name: Flags.string({ description: 'agent or function name (a DNS label); default: manifest or directory name' }),
    framework: Flags.string({ description: 'framework', options: [...FRAMEWORKS] }),
    runtime: Flags.string({ description: 'function runtime', options: [...RUNTIMES] }),
    config: Flags.string({ description: 'config JSON applied to the first revision, e.g. {"timeout_seconds":120}' }),
    project: projectFlag,
    wait: Flags.boolean({ description: 'wait until ready (use --no-wait to return after upload)', default: true, allowNo: true }),
  };

  async run() {
    const { args, flags } = await this.parse(Deploy);
    const client = await this.client();
    const spinner = startSpinner(`packing ${args.dir}`, { quiet: this.jsonEnabled() });
    let result;
    try {
      result = await deployDirectory(client, {
        dir: args.dir,
        name: flags.name,
        framework: flags.framework,
        runtime: flags.runtime,
        config: flags.config,
        ...projectQuery(flags.project, flags.context),
        wait: flags.wait,
        onState: (a) => spinner.update(`${a.name}: ${a.state}${a.message ? ` (${a.message.split('\n')[0]!.slice(0, 80)})` : ''}`),
      });
      spinner.succeed(`${result.agent.name}: ${result.agent.state}`);
    } catch (e) {
      spinner.fail('deploy failed');
      throw e;
    }
    for (const s of result.skipped) this.note(`skipped ${s}`);
    const a = result.agent;
    this.print(a.state === 'ready' ? `${a.name} is ready (revision ${a.latest_revision})` : `${a.name} accepted: ${a.state} (build ${result.build_id})`);
    this.print(`  url:    ${a.public_url}`);
    this.print(`  invoke: ${this.config.bin} invoke ${a.name} -m "hello"`);
    return result;
  }
}
