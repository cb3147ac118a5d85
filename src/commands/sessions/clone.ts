import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag, projectQuery } from '../../cli/agent-flags.js';
import { sessionsApi } from '../../client/sessions.js';

export default class SessionsClone extends BaseCommand {
  static override summary = 'Copy a session under a new id (same turns)';
  static override examples = ['<%= config.bin %> sessions clone assistant 3f2a9c0d7e6b4a1f8c5d2e0b --new-id what-if-1'];
  static override args = { agent: Args.string({ description: 'agent or function name', required: true }), id: Args.string({ description: 'session id', required: true }) };
  static override flags = {
    project: projectFlag,
    'new-id': Flags.string({ description: 'id of the copy (generated when omitted)' }),
  };

  async run() {
    const { args, flags } = await this.parse(SessionsClone);
    const api = sessionsApi(await this.client(), args.agent, projectQuery(flags.project, flags.context));
    const res = await api.clone(args.id, flags['new-id']);
    this.print(`session ${res.session.id}: ${res.session.turn_count} turns copied from ${args.id}; continue it with: invoke ${args.agent} --session ${res.session.id}`);
    return res;
  }
}
