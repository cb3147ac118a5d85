import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { confirm, yesFlag } from '../../cli/flags.js';
import { projectFlag, projectQuery } from '../../cli/agent-flags.js';
import { sessionsApi } from '../../client/sessions.js';

export default class SessionsRewind extends BaseCommand {
  static override summary = 'Drop the turns after a given one';
  static override examples = ['<%= config.bin %> sessions rewind assistant 3f2a9c0d7e6b4a1f8c5d2e0b --after 2'];
  static override args = { agent: Args.string({ description: 'agent or function name', required: true }), id: Args.string({ description: 'session id', required: true }) };
  static override flags = {
    project: projectFlag,
    after: Flags.integer({ description: 'keep turns 1..N (0 empties the session)', min: 0, required: true }),
    yes: yesFlag,
  };

  async run() {
    const { args, flags } = await this.parse(SessionsRewind);
    await confirm(flags.yes, `drop the turns of session ${args.id} after turn ${flags.after}`);
    const api = sessionsApi(await this.client(), args.agent, projectQuery(flags.project, flags.context));
    const res = await api.rewind(args.id, flags.after);
    this.print(`session ${res.session.id}: dropped ${res.dropped} turn${res.dropped === 1 ? '' : 's'}, ${res.session.turn_count} left`);
    return res;
  }
}
