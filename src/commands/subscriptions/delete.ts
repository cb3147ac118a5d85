import { Args } from '@oclif/core';
import { messagingRoutes } from '../../api/messaging.js';
import { ProjectCommand, projectFlag } from '../../cli/messaging.js';
import { confirm, yesFlag } from '../../cli/flags.js';

export default class SubscriptionsDelete extends ProjectCommand {
  static override summary = 'Delete a subscription (project admin)';
  static override examples = ['<%= config.bin %> subscriptions delete orders billing'];
  static override args = {
    topic: Args.string({ description: 'topic name', required: true }),
    name: Args.string({ description: 'subscription name', required: true }),
  };
  static override flags = { project: projectFlag, yes: yesFlag };

  async run() {
    const { args, flags } = await this.parse(SubscriptionsDelete);
    await confirm(flags.yes, `delete subscription ${args.name} of ${args.topic} and its undelivered messages`);
    const res = await (await this.client()).call(messagingRoutes.deleteSubscription, {
      params: { projectID: this.project(flags.project, flags.context), topic: args.topic, sub: args.name },
    });
    this.print(`subscription ${res.name} is being deleted`);
    return res;
  }
}
