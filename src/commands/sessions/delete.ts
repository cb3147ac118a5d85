import { Args } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { confirm, yesFlag } from '../../cli/flags.js';
import { projectFlag, projectQuery } from '../../cli/agent-flags.js';
import { sessionsApi } from '../../client/sessions.js';

export default class SessionsDelete extends BaseCommand {
  static override summary = 'Delete a session and its turns';
  static override examples = ['<%= config.bin %> sessions delete assistant 3f2a9c0d7e6b4a1f8c5d2e0b'];
  static override args = { agent: Args.string({ description: 'agent or function name', required: true }), id: Args.string({ description: 'session id', required: true }) };
  static override flags = {
    project: projectFlag,
    yes: yesFlag,
  };

  async run() {
    const { args, flags } = await this.parse(SessionsDelete);
    await confirm(flags.yes, `delete session ${args.id} of ${args.agent} and its turns`);
    const api = sessionsApi(await this.client(), args.agent, projectQuery(flags.project, flags.context));
    const res = await api.delete(args.id);
    this.print(`deleted session ${res.session.id} (${res.session.turn_count} turns)`);
    return res;
  }
}
