import { messagingRoutes } from '../../api/messaging.js';
import { ProjectCommand, projectFlag } from '../../cli/messaging.js';

export default class PubsubQuota extends ProjectCommand {
  static override summary = "Show the project's Pub/Sub storage budget";
  static override examples = ['<%= config.bin %> pubsub quota', '<%= config.bin %> pubsub quota --json'];
  static override flags = { project: projectFlag };

  async run() {
    const { flags } = await this.parse(PubsubQuota);
    const q = await (await this.client()).call(messagingRoutes.quota, { params: { projectID: this.project(flags.project, flags.context) } });
    this.fields(q);
    return q;
  }
}
