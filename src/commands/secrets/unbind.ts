import { Args } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag } from '../../cli/flags.js';
import { secretMapRoutes } from '../../api/secrets.js';

export default class SecretsUnbind extends BaseCommand {
  static override summary = 'Unbind and revoke at once: the variable leaves the agent and a revision rolls';
  static override examples = ['<%= config.bin %> secrets unbind support-bot STRIPE_KEY', '<%= config.bin %> secrets unbind support-bot STRIPE_KEY --json'];
  static override args = {
    agent: Args.string({ required: true, description: 'agent name' }),
    env: Args.string({ required: true, description: 'environment variable name' }),
  };
  static override flags = { project: projectFlag };

  async run() {
    const { args, flags } = await this.parse(SecretsUnbind);
    const projectID = this.projectRef(flags.project, flags.context);
    const res = await (await this.client()).call(secretMapRoutes.delete, { params: { projectID, agent: args.agent, envName: args.env } });
    this.print(`unbound ${res.agent}/${res.env_name}${res.revision_rolled ? '; new revision rolled' : ''}`);
    this.note(res.note);
    return res;
  }
}
