import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../cli/base-command.js';
import { projectFlag } from '../cli/flags.js';
import { projectQuery } from '../cli/agent-flags.js';
import { getContext } from '../client/contexts.js';
import { nameFromDir } from '../client/deploy.js';
import { findDaemon } from '../client/local-daemon.js';
import { readManifest } from '../client/pack.js';
import { humanOutput, jsonOutput } from '../dev/output.js';
import { runDev } from '../dev/session.js';

export default class Dev extends BaseCommand {
  static override summary = 'Deploy a folder, then redeploy it on every save while following its logs';
  static override description =
    'The inner loop: starts the local daemon when needed, deploys DIR as `platform deploy` does, prints where to invoke it, then watches DIR (not .git, node_modules, virtual environments, or what .gitignore and .platformignore leave out) and redeploys on each save. A failed build or start keeps the last good revision serving and shows the error\'s last lines. The workload\'s logs follow, with a line marking each new revision. On a terminal: o opens the public address (in $BROWSER, else xdg-open), i invokes with --data or DIR/payload.json, r redeploys, l clears, q or Ctrl-C quits. Without a terminal it runs until SIGINT or SIGTERM; --json prints one event per line (addresses, deploying, deployed, failed, log, invoked, opened, stopped).';
  static override examples = [
    '<%= config.bin %> dev',
    '<%= config.bin %> dev ./hello --data \'{"message":"ada"}\'',
    '<%= config.bin %> dev ./hello -p staging --verbose',
    '<%= config.bin %> dev ./hello --json',
  ];
  static override args = { dir: Args.directory({ description: 'source directory', default: '.', exists: true }) };
  static override flags = {
    name: Flags.string({ description: 'agent or function name (a DNS label); default: manifest or directory name' }),
    data: Flags.string({ description: 'payload for the i key, as JSON or @file.json (default: DIR/payload.json)' }),
    project: projectFlag,
    verbose: Flags.boolean({ description: 'print the build output live instead of a spinner' }),
  };

  async run() {
    const { args, flags } = await this.parse(Dev);
    const json = this.jsonEnabled();
    const context = getContext(flags.context);
    const local = context.kind === 'local' && !process.env.PLATFORM_API_URL;
    const running = local ? await findDaemon() : undefined;
    // connect() announces a daemon it starts; one already running is named here.
    const connection = await this.connect();
    if (running) process.stderr.write(`local daemon: ${connection.url}\n`);
    const { project } = projectQuery(flags.project, flags.context);
    const interactive = !json && Boolean(process.stdin.isTTY);
    const name = flags.name ?? readManifest(args.dir).name ?? nameFromDir(args.dir);
    const summary = await runDev({
      client: connection.client,
      dir: args.dir,
      name,
      project,
      data: flags.data,
      hotkeys: interactive,
      verbose: flags.verbose,
      output: json ? jsonOutput(process.stdout, { name, verbose: flags.verbose }) : humanOutput(process.stdout, { name, verbose: flags.verbose, bin: this.config.bin, project }),
    });
    if (summary.deployInFlight) process.stderr.write(`a deploy was still running: the daemon finishes it; \`${this.config.bin} status\` shows how it ended\n`);
    // Quit means now: a deploy in flight polls until its build ends (minutes for a pip install),
    // and idle keep-alive sockets would hold the process for seconds more.
    return this.exit(0);
  }
}
