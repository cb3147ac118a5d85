import { Args } from '@oclif/core';
import { BaseCommand } from '../../../cli/base-command.js';
import { keyColumns } from '../../../cli/key-table.js';
import { pageFlags, projectFlag, projectOrDefault } from '../../../cli/project-flag.js';
import { serviceAccountRoutes } from '../../../api/service-accounts.js';

export default class ServiceAccountKeysList extends BaseCommand {
  static override summary = "List a service account's keys, newest first";
  static override examples = ['<%= config.bin %> service-accounts keys list ci-deployer', '<%= config.bin %> service-accounts keys list ci-deployer --json'];
  static override args = { account: Args.string({ required: true, description: 'service account name or id' }) };
  static override flags = { project: projectFlag, ...pageFlags };

  async run() {
    const { args, flags } = await this.parse(ServiceAccountKeysList);
    const res = await (await this.client()).call(serviceAccountRoutes.listKeys, {
      params: { projectID: projectOrDefault(flags.project, flags.context), sa: args.account },
      query: { page_size: flags['page-size'], page_token: flags['page-token'] },
    });
    this.table(res.keys, keyColumns, 'no keys');
    if (res.next_page_token) this.note(`more: --page-token ${res.next_page_token}`);
    return res;
  }
}
