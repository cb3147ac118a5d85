import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag, projectQuery } from '../../cli/agent-flags.js';
import { sessionsApi } from '../../client/sessions.js';

export default class SessionsList extends BaseCommand {
  static override summary = 'List an agent’s sessions, newest first';
  static override examples = ['<%= config.bin %> sessions list assistant', '<%= config.bin %> sessions list assistant --user u-42 --json'];
  static override args = { agent: Args.string({ description: 'agent or function name', required: true }) };
  static override flags = {
    project: projectFlag,
    user: Flags.string({ description: 'only the sessions of this end user' }),
    'page-size': Flags.integer({ description: 'sessions per page (1-200)', min: 1, max: 200 }),
    'page-token': Flags.string({ description: 'token from the previous page' }),
  };

  async run() {
    const { args, flags } = await this.parse(SessionsList);
    const api = sessionsApi(await this.client(), args.agent, projectQuery(flags.project, flags.context));
    const res = await api.list({ user: flags.user, pageSize: flags['page-size'], pageToken: flags['page-token'] });
    this.table(res.sessions, [
      { header: 'id', get: (s) => s.id },
      { header: 'user', get: (s) => s.user_id },
      { header: 'turns', get: (s) => String(s.turn_count) },
      { header: 'updated', get: (s) => s.updated_at },
    ], `no sessions yet: each invoke of ${args.agent} starts or continues one`);
    if (res.next_page_token) this.note(`more: --page-token ${res.next_page_token}`);
    return res;
  }
}
