import { Flags } from '@oclif/core';
import { messagingRoutes } from '../../api/messaging.js';
import { ProjectCommand, projectFlag, topicColumns } from '../../cli/messaging.js';

export default class TopicsList extends ProjectCommand {
  static override summary = 'List the topics of a project';
  static override examples = ['<%= config.bin %> topics list', '<%= config.bin %> topics list --project shop --json'];
  static override flags = {
    project: projectFlag,
    'page-size': Flags.integer({ description: 'topics per page (1-200)', min: 1, max: 200 }),
    'page-token': Flags.string({ description: 'token from the previous page' }),
  };

  async run() {
    const { flags } = await this.parse(TopicsList);
    const res = await (await this.client()).call(messagingRoutes.listTopics, {
      params: { projectID: this.project(flags.project, flags.context) },
      query: { page_size: flags['page-size'], page_token: flags['page-token'] },
    });
    this.table(res.topics, topicColumns, 'no topics');
    if (res.next_page_token) this.note(`more: --page-token ${res.next_page_token}`);
    return res;
  }
}
