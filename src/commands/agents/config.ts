import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag, projectQuery } from '../../cli/agent-flags.js';
import { agentRoutes, type AgentConfig } from '../../api/agents.js';

export default class AgentsConfig extends BaseCommand {
  static override summary = 'Show or change the compute config of an agent (a change rolls a revision)';
  static override examples = ['<%= config.bin %> agents config hello', '<%= config.bin %> agents config hello --timeout 120 --size large'];
  static override args = { name: Args.string({ description: 'agent or function name', required: true }) };
  static override flags = {
    timeout: Flags.integer({ description: 'request timeout in seconds (clamped at 900)', min: 1 }),
    'response-start': Flags.integer({ description: 'response start timeout in seconds', min: 1 }),
    size: Flags.string({ description: 'instance size', options: ['small', 'medium', 'large', 'xlarge'] }),
    description: Flags.string({ description: 'free text shown with the agent' }),
    project: projectFlag,
  };

  async run() {
    const { args, flags } = await this.parse(AgentsConfig);
    const client = await this.client();
    const query = projectQuery(flags.project, flags.context);
    const patch: AgentConfig = {
      ...(flags.timeout !== undefined ? { timeout_seconds: flags.timeout } : {}),
      ...(flags['response-start'] !== undefined ? { response_start_seconds: flags['response-start'] } : {}),
      ...(flags.size ? { instance_size: flags.size as AgentConfig['instance_size'] } : {}),
      ...(flags.description !== undefined ? { description: flags.description } : {}),
    };
    if (!Object.keys(patch).length) {
      const res = await client.call(agentRoutes.configGet, { params: { name: args.name }, query });
      this.fields(res.config as Record<string, unknown>);
      if (!Object.keys(res.config).length) this.note('defaults: timeout_seconds 60, instance_size medium');
      return res;
    }
    const res = await client.call(agentRoutes.configPatch, { params: { name: args.name }, query, body: patch });
    this.print(res.config_updated ? `updated the config of ${args.name}${res.latest_revision ? ` (revision ${res.latest_revision})` : ''}` : `config of ${args.name} unchanged`);
    return res;
  }
}
