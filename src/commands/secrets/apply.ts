import { Args } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag } from '../../cli/flags.js';
import { secretMapRoutes } from '../../api/secrets.js';

export default class SecretsApply extends BaseCommand {
  static override summary = "Write every bound value into an agent's environment (all or nothing) and roll a revision";
  static override examples = ['<%= config.bin %> secrets apply support-bot', '<%= config.bin %> secrets apply support-bot --json'];
  static override args = { agent: Args.string({ required: true, description: 'agent name' }) };
  static override flags = { project: projectFlag };

  async run() {
    const { args, flags } = await this.parse(SecretsApply);
    const projectID = this.projectRef(flags.project, flags.context);
    const res = await (await this.client()).call(secretMapRoutes.apply, { params: { projectID, agent: args.agent } });
    this.table(res.applied, [
      { header: 'env', get: (r) => r.env_name },
      { header: 'secret', get: (r) => r.secret_name },
      { header: 'version', get: (r) => r.version },
      { header: 'applied', get: (r) => r.applied },
    ], 'no bindings');
    this.note(res.note);
    return res;
  }
}
