import { Args } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag, projectQuery } from '../../cli/agent-flags.js';
import { sessionsApi } from '../../client/sessions.js';

export default class SessionsMemorize extends BaseCommand {
  static override summary = 'Turn a session into memories (memory must be on)';
  static override examples = ['<%= config.bin %> sessions memorize assistant 3f2a9c0d7e6b4a1f8c5d2e0b'];
  static override args = { agent: Args.string({ description: 'agent or function name', required: true }), id: Args.string({ description: 'session id', required: true }) };
  static override flags = {
    project: projectFlag,
  };

  async run() {
    const { args, flags } = await this.parse(SessionsMemorize);
    const api = sessionsApi(await this.client(), args.agent, projectQuery(flags.project, flags.context));
    const res = await api.memorize(args.id);
    const dropped = [res.skipped_sensitive ? `${res.skipped_sensitive} sensitive` : '', res.skipped_off_topic ? `${res.skipped_off_topic} off topic` : ''].filter(Boolean);
    this.print(`${res.created.length} memor${res.created.length === 1 ? 'y' : 'ies'} from session ${res.session_id} (${res.extractor} extractor; ${res.skipped_duplicates} already known${dropped.length ? `; dropped ${dropped.join(', ')}` : ''})`);
    for (const m of res.created) this.print(`  ${m.id}  ${m.fact}`);
    return res;
  }
}
