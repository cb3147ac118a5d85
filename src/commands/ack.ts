import { Args, Flags } from '@oclif/core';
import { messagingRoutes } from '../api/messaging.js';
import { ProjectCommand, projectFlag, subRef } from '../cli/messaging.js';
import { UsageError } from '../client/errors.js';

export default class Ack extends ProjectCommand {
  static override summary = 'Acknowledge pulled messages by ack id';
  static override examples = ['<%= config.bin %> ack orders/billing MS4xLjE MS4yLjE', '<%= config.bin %> ack billing --topic orders MS4xLjE'];
  static override strict = false;
  static override args = {
    subscription: Args.string({ description: 'TOPIC/SUB (or SUB with --topic)', required: true }),
    ids: Args.string({ description: 'ack ids from `platform pull` (one or more)' }),
  };
  static override flags = { project: projectFlag, topic: Flags.string({ description: 'topic of the subscription' }) };

  async run() {
    const { args, argv, flags } = await this.parse(Ack);
    const ids = (argv as string[]).slice(1);
    if (!ids.length) throw new UsageError('give at least one ack id', 'copy them from `platform pull`');
    const { topic, sub } = subRef(args.subscription, flags.topic);
    const res = await (await this.client()).call(messagingRoutes.acknowledge, {
      params: { projectID: this.project(flags.project, flags.context), topic, sub },
      body: { ack_ids: ids },
    });
    this.print(`acknowledged ${res.acknowledged} of ${ids.length}`);
    return res;
  }
}
