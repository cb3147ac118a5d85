import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag, projectQuery } from '../../cli/agent-flags.js';
import { memoryApi } from '../../client/sessions.js';

export default class MemoryPolicy extends BaseCommand {
  static override summary = 'Show or set the memory policy (off by default)';
  static override examples = ['<%= config.bin %> memory policy assistant', '<%= config.bin %> memory policy assistant --enable --scope user --retention-days 90'];
  static override args = { agent: Args.string({ description: 'agent or function name', required: true }) };
  static override flags = {
    project: projectFlag,
    enable: Flags.boolean({ description: 'turn memory on', exclusive: ['disable'] }),
    disable: Flags.boolean({ description: 'turn memory off' }),
    scope: Flags.string({ description: 'user: each end user sees their own memories; agent: all users share them', options: ['user', 'agent'] }),
    'retention-days': Flags.integer({ description: 'entries expire after this many days (0: keep)', min: 0, max: 3650 }),
    inject: Flags.integer({ description: 'memories put into the context per invoke (0-50)', min: 0, max: 50 }),
  };

  async run() {
    const { args, flags } = await this.parse(MemoryPolicy);
    const api = memoryApi(await this.client(), args.agent, projectQuery(flags.project, flags.context));
    const patch = {
      ...(flags.enable ? { enabled: true } : flags.disable ? { enabled: false } : {}),
      ...(flags.scope ? { scope: flags.scope as 'user' | 'agent' } : {}),
      ...(flags['retention-days'] !== undefined ? { retention_days: flags['retention-days'] || null } : {}),
      ...(flags.inject !== undefined ? { inject: flags.inject } : {}),
    };
    const res = Object.keys(patch).length ? await api.setPolicy(patch) : await api.policy();
    this.fields(res.policy, ['enabled', 'scope', 'retention_days', 'inject']);
    return res;
  }
}
