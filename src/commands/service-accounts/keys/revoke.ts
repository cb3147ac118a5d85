import { Args } from '@oclif/core';
import { BaseCommand } from '../../../cli/base-command.js';
import { projectFlag, projectOrDefault } from '../../../cli/project-flag.js';
import { serviceAccountRoutes } from '../../../api/service-accounts.js';
import { confirm, yesFlag } from '../../../cli/flags.js';

export default class ServiceAccountKeysRevoke extends BaseCommand {
  static override summary = 'Revoke a service-account key at once';
  static override examples = ['<%= config.bin %> service-accounts keys revoke ci-deployer abc123def456', '<%= config.bin %> service-accounts keys revoke ci-deployer abc123def456 --json'];
  static override args = {
    account: Args.string({ required: true, description: 'service account name or id' }),
    key: Args.string({ required: true, description: 'key id (see `platform service-accounts keys list`)' }),
  };
  static override flags = { project: projectFlag, yes: yesFlag };

  async run() {
    const { args, flags } = await this.parse(ServiceAccountKeysRevoke);
    await confirm(flags.yes, `revoke key ${args.key} of service account ${args.account}`);
    const res = await (await this.client()).call(serviceAccountRoutes.revokeKey, {
      params: { projectID: projectOrDefault(flags.project, flags.context), sa: args.account, keyID: args.key },
    });
    this.print(`revoked ${res.revoked}: ${res.note}`);
    return res;
  }
}
