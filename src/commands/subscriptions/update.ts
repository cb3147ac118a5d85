import { Args, Flags } from '@oclif/core';
import { messagingRoutes } from '../../api/messaging.js';
import { flat, ProjectCommand, projectFlag } from '../../cli/messaging.js';
import { editableSubBody, editableSubFlags } from '../../cli/subscription-flags.js';

export default class SubscriptionsUpdate extends ProjectCommand {
  static override summary = 'Edit a subscription (project admin); type, topic and start-from are fixed';
  static override examples = [
    '<%= config.bin %> subscriptions update orders billing --ack-deadline 120',
    '<%= config.bin %> subscriptions update orders hook --pull',
    '<%= config.bin %> subscriptions update orders hook --dead-letter-topic ""',
  ];
  static override args = {
    topic: Args.string({ description: 'topic name', required: true }),
    name: Args.string({ description: 'subscription name', required: true }),
  };
  static override flags = {
    project: projectFlag,
    pull: Flags.boolean({ description: 'switch to pull delivery', exclusive: ['push-url'] }),
    ...editableSubFlags,
  };

  async run() {
    const { args, flags } = await this.parse(SubscriptionsUpdate);
    const sub = await (await this.client()).call(messagingRoutes.patchSubscription, {
      params: { projectID: this.project(flags.project, flags.context), topic: args.topic, sub: args.name },
      body: editableSubBody(flags, flags.pull),
    });
    this.fields(flat(sub));
    return sub;
  }
}
