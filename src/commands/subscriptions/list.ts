import { Args, Flags } from '@oclif/core';
import { messagingRoutes } from '../../api/messaging.js';
import { ProjectCommand, projectFlag, subColumns } from '../../cli/messaging.js';

export default class SubscriptionsList extends ProjectCommand {
  static override summary = "List a topic's subscriptions";
  static override examples = ['<%= config.bin %> subscriptions list orders', '<%= config.bin %> subscriptions list orders --json'];
  static override args = { topic: Args.string({ description: 'topic name', required: true }) };
  static override flags = {
    project: projectFlag,
    'page-size': Flags.integer({ description: 'subscriptions per page (1-200)', min: 1, max: 200 }),
    'page-token': Flags.string({ description: 'token from the previous page' }),
  };

  async run() {
    const { args, flags } = await this.parse(SubscriptionsList);
    const res = await (await this.client()).call(messagingRoutes.listSubscriptions, {
      params: { projectID: this.project(flags.project, flags.context), topic: args.topic },
      query: { page_size: flags['page-size'], page_token: flags['page-token'] },
    });
    this.table(res.subscriptions, subColumns, `no subscriptions on ${args.topic}`);
    if (res.next_page_token) this.note(`more: --page-token ${res.next_page_token}`);
    return res;
  }
}
