import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../cli/base-command.js';
import { projectFlag, projectQuery } from '../cli/agent-flags.js';
import { startSpinner } from '../cli/spinner.js';
import { deployDirectory } from '../client/deploy.js';
import { FRAMEWORKS, RUNTIMES } from '../api/agents.js';

export default class Deploy extends BaseCommand {
  static override summary = 'Deploy an agent or function from a directory';
  static override description =
    'Packs DIR (honouring .gitignore and .platformignore), uploads it, and waits until it is ready, showing build progress behind a spinner (--verbose prints the build output as it comes). Framework, runtime and name default to the platform.json a template wrote; without one, a folder holding a function handler (main.py, index.js, a .go file, handler.rb) deploys as that function. A failed build prints the last lines of its output; `platform logs NAME --build` shows all of it.';
  static override examples = [
    '<%= config.bin %> deploy',
    '<%= config.bin %> deploy ./hello --name hello --framework function --runtime python',
    '<%= config.bin %> deploy ./agent --framework adk --no-wait --json',
    '<%= config.bin %> deploy ./hello --verbose',
  ];
  static override args = { dir: Args.directory({ description: 'source directory', default: '.', exists: true }) };
  static override flags = {
    name: Flags.string({ description: 'agent or function name (a DNS label); default: manifest or directory name' }),
    framework: Flags.string({ description: 'framework', options: [...FRAMEWORKS] }),
    runtime: Flags.string({ description: 'function runtime', options: [...RUNTIMES] }),
    config: Flags.string({ description: 'config JSON applied to the first revision, e.g. {"timeout_seconds":120}' }),
    project: projectFlag,
    wait: Flags.boolean({ description: 'wait until ready (use --no-wait to return after upload)', default: true, allowNo: true }),
    verbose: Flags.boolean({ description: 'print the build output live (on stderr) instead of a spinner' }),
  };

  async run() {
    const { args, flags } = await this.parse(Deploy);
    const client = await this.client();
    const verbose = flags.verbose && !this.jsonEnabled();
    const spinner = startSpinner(`packing ${args.dir}`, { quiet: this.jsonEnabled() || verbose });
    let phase = '';
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
        onDetected: (d) => (this.jsonEnabled() ? undefined : spinner.note(`no platform.json: deploying as a ${d.runtime} function (found ${d.by})`)),
        onState: (a) => {
          phase = `${a.name}: ${a.state}`;
          const text = `${phase}${a.message ? ` (${a.message.split('\n')[0]!.slice(0, 80)})` : ''}`;
          if (verbose) this.note(text);
          else spinner.update(text);
        },
        onBuildOutput: verbose
          ? (chunk) => process.stderr.write(chunk)
          : process.stderr.isTTY
            ? (chunk) => {
                // On a terminal the spinner's line shows the newest build line; elsewhere it stays one line per phase.
                const last = chunk.trimEnd().split('\n').at(-1)?.trim();
                if (last) spinner.update(`${phase} · ${last.slice(0, 70)}`);
              }
            : () => {},
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
