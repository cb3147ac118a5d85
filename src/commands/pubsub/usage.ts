import { messagingRoutes } from '../../api/messaging.js';
import { ProjectCommand, projectFlag } from '../../cli/messaging.js';

export default class PubsubUsage extends ProjectCommand {
  static override summary = 'Show per-topic Pub/Sub counters';
  static override examples = ['<%= config.bin %> pubsub usage', '<%= config.bin %> pubsub usage --json'];
  static override flags = { project: projectFlag };

  async run() {
    const { flags } = await this.parse(PubsubUsage);
    const u = await (await this.client()).call(messagingRoutes.usage, { params: { projectID: this.project(flags.project, flags.context) } });
    type Row = (typeof u.topics)[number];
    this.table<Row>([...u.topics, u.totals], [
      { header: 'topic', get: (r) => r.name },
      { header: 'published', get: (r) => r.published },
      { header: 'delivered', get: (r) => r.delivered },
      { header: 'published bytes', get: (r) => r.published_bytes },
      { header: 'storage bytes', get: (r) => r.storage_bytes },
      { header: 'backlog bytes', get: (r) => r.backlog_bytes },
      { header: 'subs', get: (r) => r.subscriptions },
    ]);
    this.note(u.caveat);
    return u;
  }
}
