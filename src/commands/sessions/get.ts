import { Args } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag, projectQuery } from '../../cli/agent-flags.js';
import { sessionsApi } from '../../client/sessions.js';

export default class SessionsGet extends BaseCommand {
  static override summary = 'Show a session and its turns';
  static override examples = ['<%= config.bin %> sessions get assistant 3f2a9c0d7e6b4a1f8c5d2e0b'];
  static override args = { agent: Args.string({ description: 'agent or function name', required: true }), id: Args.string({ description: 'session id', required: true }) };
  static override flags = {
    project: projectFlag,
  };

  async run() {
    const { args, flags } = await this.parse(SessionsGet);
    const api = sessionsApi(await this.client(), args.agent, projectQuery(flags.project, flags.context));
    const res = await api.get(args.id);
    this.fields(res.session, ['id', 'agent', 'user_id', 'turn_count', 'cloned_from', 'created_at', 'updated_at']);
    this.table(res.turns, [
      { header: '#', get: (t) => String(t.index) },
      { header: 'message', get: (t) => t.message },
      { header: 'output', get: (t) => t.output },
      { header: 'tools', get: (t) => t.tool_calls.map((c) => c.name ?? '').join(' ') },
    ], 'no turns');
    return res;
  }
}
