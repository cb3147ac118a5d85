import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag, projectQuery } from '../../cli/agent-flags.js';
import { startSpinner } from '../../cli/spinner.js';
import { agentRoutes } from '../../api/agents.js';
import { followBuild, waitForAgent } from '../../client/deploy.js';

export default class AgentsRedeploy extends BaseCommand {
  static override summary = 'Rebuild an agent or function from its stored source';
  static override examples = ['<%= config.bin %> agents redeploy hello', '<%= config.bin %> agents redeploy hello --no-wait --json'];
  static override args = { name: Args.string({ description: 'agent or function name', required: true }) };
  static override flags = {
    project: projectFlag,
    wait: Flags.boolean({ description: 'wait until ready', default: true, allowNo: true }),
    verbose: Flags.boolean({ description: 'print the build output live (on stderr) instead of a spinner' }),
  };

  async run() {
    const { args, flags } = await this.parse(AgentsRedeploy);
    const client = await this.client();
    const query = projectQuery(flags.project, flags.context);
    const res = await client.call(agentRoutes.redeploy, { params: { name: args.name }, query, body: {} });
    this.note(res.note);
    if (!flags.wait) return res;
    const verbose = flags.verbose && !this.jsonEnabled();
    const spinner = startSpinner(`${args.name}: ${res.agent.state}`, { quiet: this.jsonEnabled() || verbose });
    try {
      if (verbose) await followBuild(client, args.name, query.project, res.build_id, (chunk) => process.stderr.write(chunk));
      const agent = await waitForAgent(client, args.name, query.project, res.agent, { onState: (a) => spinner.update(`${a.name}: ${a.state}`) });
      spinner.succeed(`${agent.name}: ${agent.state}`);
      this.print(`${agent.name} is ready (revision ${agent.latest_revision})`);
      return { ...res, agent };
    } catch (e) {
      spinner.fail(`${args.name}: redeploy failed`);
      throw e;
    }
  }
}
