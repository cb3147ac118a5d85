import { Args, Flags } from '@oclif/core';
import { messagingRoutes } from '../../api/messaging.js';
import { flat, ProjectCommand, projectFlag } from '../../cli/messaging.js';
import { waitUntilReady } from '../../client/wait-ready.js';

export default class TopicsCreate extends ProjectCommand {
  static override summary = 'Create a topic (project admin)';
  static override examples = [
    '<%= config.bin %> topics create orders',
    '<%= config.bin %> topics create events --max-bytes 64Mi --max-age 24h --discard new',
    '<%= config.bin %> topics create orders --wait && <%= config.bin %> publish orders --text hello',
  ];
  static override args = { name: Args.string({ description: 'topic name (lowercase letters, digits, hyphens)', required: true }) };
  static override flags = {
    project: projectFlag,
    'display-name': Flags.string({ description: 'free text' }),
    'max-bytes': Flags.string({ description: 'storage cap claimed from the project budget, e.g. 16Mi (default) or 1Gi' }),
    'max-age': Flags.string({ description: 'drop messages older than this, e.g. 24h or 30m (default: no limit)' }),
    discard: Flags.string({ description: 'when full: old drops the oldest, new refuses new messages', options: ['old', 'new'] }),
    wait: Flags.boolean({ description: 'return once the topic is ready: publishing and new subscriptions work at once (a pending topic refuses publishes)', default: false }),
  };

  async run() {
    const { args, flags } = await this.parse(TopicsCreate);
    const client = await this.client();
    const projectID = this.project(flags.project, flags.context);
    let topic = await client.call(messagingRoutes.createTopic, {
      params: { projectID },
      body: {
        name: args.name,
        display_name: flags['display-name'],
        max_bytes: flags['max-bytes'],
        max_age: flags['max-age'],
        discard: flags.discard as 'old' | 'new' | undefined,
      },
    });
    if (flags.wait && !topic.ready) {
      const topicName = topic.name;
      topic = await waitUntilReady(() => client.call(messagingRoutes.getTopic, { params: { projectID, topic: topicName } }), {
        what: `topic ${topicName}`,
        next: `check it with \`platform topics get ${topicName}\``,
        settled: (t) => t.state === 'deleting',
      });
    }
    this.fields(flat(topic));
    this.note(topic.ready ? `topic ${topic.name} created and ready` : `topic ${topic.name} created (${topic.state}); it is ready in a moment (--wait waits for it)`);
    return topic;
  }
}
