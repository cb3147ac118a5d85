import { Args } from '@oclif/core';
import { messagingRoutes } from '../../api/messaging.js';
import { ProjectCommand, projectFlag } from '../../cli/messaging.js';
import { confirm, yesFlag } from '../../cli/flags.js';

export default class TopicsDelete extends ProjectCommand {
  static override summary = 'Delete a topic and its subscriptions (project admin)';
  static override examples = ['<%= config.bin %> topics delete orders'];
  static override args = { name: Args.string({ description: 'topic name', required: true }) };
  static override flags = { project: projectFlag, yes: yesFlag };

  async run() {
    const { args, flags } = await this.parse(TopicsDelete);
    await confirm(flags.yes, `delete topic ${args.name} and its messages`);
    const res = await (await this.client()).call(messagingRoutes.deleteTopic, {
      params: { projectID: this.project(flags.project, flags.context), topic: args.name },
    });
    this.print(`topic ${res.name} is being deleted with its subscriptions`);
    return res;
  }
}
