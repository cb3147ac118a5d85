import { Args, Flags } from '@oclif/core';
import { messagingRoutes } from '../../api/messaging.js';
import { flat, ProjectCommand, projectFlag } from '../../cli/messaging.js';

export default class TopicsCreate extends ProjectCommand {
  static override summary = 'Create a topic (project admin)';
  static override examples = [
    '<%= config.bin %> topics create orders',
    '<%= config.bin %> topics create events --max-bytes 64Mi --max-age 24h --discard new',
  ];
  static override args = { name: Args.string({ description: 'topic name (lowercase letters, digits, hyphens)', required: true }) };
  static override flags = {
    project: projectFlag,
    'display-name': Flags.string({ description: 'free text' }),
    'max-bytes': Flags.string({ description: 'storage cap claimed from the project budget, e.g. 16Mi (default) or 1Gi' }),
    'max-age': Flags.string({ description: 'drop messages older than this, e.g. 24h or 30m (default: no limit)' }),
    discard: Flags.string({ description: 'when full: old drops the oldest, new refuses new messages', options: ['old', 'new'] }),
  };

  async run() {
    const { args, flags } = await this.parse(TopicsCreate);
    const topic = await (await this.client()).call(messagingRoutes.createTopic, {
      params: { projectID: this.project(flags.project, flags.context) },
      body: {
        name: args.name,
        display_name: flags['display-name'],
        max_bytes: flags['max-bytes'],
        max_age: flags['max-age'],
        discard: flags.discard as 'old' | 'new' | undefined,
      },
    });
    this.fields(flat(topic));
    this.note(`topic ${topic.name} created (${topic.state}); it is ready in a moment`);
    return topic;
  }
}
