import { Args } from '@oclif/core';
import { messagingRoutes } from '../../api/messaging.js';
import { flat, ProjectCommand, projectFlag } from '../../cli/messaging.js';

export default class TopicsGet extends ProjectCommand {
  static override summary = 'Show one topic with its stats';
  static override examples = ['<%= config.bin %> topics get orders', '<%= config.bin %> topics get orders --json'];
  static override args = { name: Args.string({ description: 'topic name', required: true }) };
  static override flags = { project: projectFlag };

  async run() {
    const { args, flags } = await this.parse(TopicsGet);
    const topic = await (await this.client()).call(messagingRoutes.getTopic, {
      params: { projectID: this.project(flags.project, flags.context), topic: args.name },
    });
    this.fields(flat(topic));
    return topic;
  }
}
