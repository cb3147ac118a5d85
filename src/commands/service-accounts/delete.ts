import { Args } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { confirm, yesFlag } from '../../cli/flags.js';
import { projectFlag, projectOrDefault } from '../../cli/project-flag.js';
import { serviceAccountRoutes } from '../../api/service-accounts.js';

export default class ServiceAccountsDelete extends BaseCommand {
  static override summary = 'Delete a service account: its keys stop working, its name stays reserved';
  static override examples = ['<%= config.bin %> service-accounts delete ci-deployer', '<%= config.bin %> service-accounts delete ci-deployer --project web --json'];
  static override args = { name: Args.string({ required: true, description: 'account name or id' }) };
  static override flags = { project: projectFlag, yes: yesFlag };

  async run() {
    const { args, flags } = await this.parse(ServiceAccountsDelete);
    await confirm(flags.yes, `delete service account ${args.name} (its keys stop working)`);
    const res = await (await this.client()).call(serviceAccountRoutes.delete, {
      params: { projectID: projectOrDefault(flags.project, flags.context), sa: args.name },
    });
    this.print(`deleted ${res.service_account.name}; revoked ${res.revoked_keys} key(s)`);
    this.note(res.note);
    return res;
  }
}
