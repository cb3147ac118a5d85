import { Args, Flags } from '@oclif/core';
import { messagingRoutes } from '../../api/messaging.js';
import { flat, ProjectCommand, projectFlag } from '../../cli/messaging.js';
import { editableSubBody, editableSubFlags } from '../../cli/subscription-flags.js';

export default class SubscriptionsCreate extends ProjectCommand {
  static override summary = 'Create a subscription on a topic (project admin)';
  static override examples = [
    '<%= config.bin %> subscriptions create orders billing',
    '<%= config.bin %> subscriptions create orders by-customer --type key-shared --ack-deadline 60',
    '<%= config.bin %> subscriptions create orders hook --push-url http://fn-abc123.apps.localhost:7070/ --dead-letter-topic parked',
  ];
  static override args = {
    topic: Args.string({ description: 'topic name', required: true }),
    name: Args.string({ description: 'subscription name', required: true }),
  };
  static override flags = {
    project: projectFlag,
    type: Flags.string({ description: 'delivery type', options: ['shared', 'key-shared', 'exclusive', 'failover'] }),
    'start-from': Flags.string({ description: 'all retained messages or only new ones', options: ['all', 'new'] }),
    ...editableSubFlags,
  };

  async run() {
    const { args, flags } = await this.parse(SubscriptionsCreate);
    const sub = await (await this.client()).call(messagingRoutes.createSubscription, {
      params: { projectID: this.project(flags.project, flags.context), topic: args.topic },
      body: {
        name: args.name,
        type: flags.type as 'shared' | undefined,
        start_from: flags['start-from'] as 'all' | undefined,
        ...editableSubBody(flags),
      },
    });
    this.fields(flat(sub));
    return sub;
  }
}
