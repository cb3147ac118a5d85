import { Args } from '@oclif/core';
import { messagingRoutes } from '../../api/messaging.js';
import { flat, ProjectCommand, projectFlag } from '../../cli/messaging.js';

export default class SubscriptionsGet extends ProjectCommand {
  static override summary = 'Show one subscription with its stats';
  static override examples = ['<%= config.bin %> subscriptions get orders billing --json'];
  static override args = {
    topic: Args.string({ description: 'topic name', required: true }),
    name: Args.string({ description: 'subscription name', required: true }),
  };
  static override flags = { project: projectFlag };

  async run() {
    const { args, flags } = await this.parse(SubscriptionsGet);
    const sub = await (await this.client()).call(messagingRoutes.getSubscription, {
      params: { projectID: this.project(flags.project, flags.context), topic: args.topic, sub: args.name },
    });
    this.fields(flat(sub));
    return sub;
  }
}
