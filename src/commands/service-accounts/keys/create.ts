import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../../cli/base-command.js';
import { projectFlag, projectOrDefault } from '../../../cli/project-flag.js';
import { serviceAccountRoutes } from '../../../api/service-accounts.js';

export default class ServiceAccountKeysCreate extends BaseCommand {
  static override summary = 'Create a key for a service account; the secret is printed once';
  static override examples = [
    '<%= config.bin %> service-accounts keys create ci-deployer github-actions',
    '<%= config.bin %> service-accounts keys create ci-deployer nightly --expires-in-days 90 --json',
  ];
  static override args = {
    account: Args.string({ required: true, description: 'service account name or id' }),
    name: Args.string({ required: true, description: 'display name of the key' }),
  };
  static override flags = {
    project: projectFlag,
    'expires-in-days': Flags.integer({ description: 'days until the key expires (0 or absent: never; at most 3650)', min: 0, max: 3650 }),
  };

  async run() {
    const { args, flags } = await this.parse(ServiceAccountKeysCreate);
    const res = await (await this.client()).call(serviceAccountRoutes.createKey, {
      params: { projectID: projectOrDefault(flags.project, flags.context), sa: args.account },
      body: { display_name: args.name, ...(flags['expires-in-days'] !== undefined ? { expires_in_days: flags['expires-in-days'] } : {}) },
    });
    this.print(res.secret);
    this.note(`key ${res.key.key_id} for ${args.account}: ${res.note}`);
    return res;
  }
}
