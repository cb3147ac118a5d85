import { Args } from '@oclif/core';
import { messagingRoutes } from '../../api/messaging.js';
import { ProjectCommand, projectFlag } from '../../cli/messaging.js';

export default class SubscriptionsDelete extends ProjectCommand {
  static override summary = 'Delete a subscription (project admin)';
  static override examples = ['<%= config.bin %> subscriptions delete orders billing'];
  static override args = {
    topic: Args.string({ description: 'topic name', required: true }),
    name: Args.string({ description: 'subscription name', required: true }),
  };
  static override flags = { project: projectFlag };

  async run() {
    const { args, flags } = await this.parse(SubscriptionsDelete);
    const res = await (await this.client()).call(messagingRoutes.deleteSubscription, {
      params: { projectID: this.project(flags.project, flags.context), topic: args.topic, sub: args.name },
    });
    this.print(`subscription ${res.name} is being deleted`);
    return res;
  }
}
