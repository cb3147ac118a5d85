import { Args, Flags } from '@oclif/core';
import { messagingRoutes } from '../../api/messaging.js';
import { flat, ProjectCommand, projectFlag } from '../../cli/messaging.js';

export default class TopicsUpdate extends ProjectCommand {
  static override summary = 'Edit a topic (project admin); omitted settings keep their value';
  static override examples = ['<%= config.bin %> topics update orders --max-bytes 32Mi', '<%= config.bin %> topics update orders --max-age ""'];
  static override args = { name: Args.string({ description: 'topic name', required: true }) };
  static override flags = {
    project: projectFlag,
    'display-name': Flags.string({ description: 'free text' }),
    'max-bytes': Flags.string({ description: 'new storage cap; raising it re-checks the project budget' }),
    'max-age': Flags.string({ description: 'new age limit; an empty string clears it' }),
    discard: Flags.string({ description: 'old or new', options: ['old', 'new'] }),
  };

  async run() {
    const { args, flags } = await this.parse(TopicsUpdate);
    const topic = await (await this.client()).call(messagingRoutes.patchTopic, {
      params: { projectID: this.project(flags.project, flags.context), topic: args.name },
      body: {
        display_name: flags['display-name'],
        max_bytes: flags['max-bytes'],
        max_age: flags['max-age'],
        discard: flags.discard as 'old' | 'new' | undefined,
      },
    });
    this.fields(flat(topic));
    return topic;
  }
}
