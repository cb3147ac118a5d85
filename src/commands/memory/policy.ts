import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag, projectQuery } from '../../cli/agent-flags.js';
import { memoryApi } from '../../client/sessions.js';

export default class MemoryPolicy extends BaseCommand {
  static override summary = 'Show or set the memory policy (off by default)';
  static override examples = [
    '<%= config.bin %> memory policy assistant',
    '<%= config.bin %> memory policy assistant --enable --scope user --retention-days 90',
    '<%= config.bin %> memory policy assistant --topic "travel plans" --topic diet --instructions "Ignore small talk." --no-knowledge',
  ];
  static override args = { agent: Args.string({ description: 'agent or function name', required: true }) };
  static override flags = {
    project: projectFlag,
    enable: Flags.boolean({ description: 'turn memory on', exclusive: ['disable'] }),
    disable: Flags.boolean({ description: 'turn memory off' }),
    scope: Flags.string({ description: 'user: each end user sees their own memories; agent: all users share them', options: ['user', 'agent'] }),
    'retention-days': Flags.integer({ description: 'entries expire after this many days (0: keep)', min: 0, max: 3650 }),
    inject: Flags.integer({ description: 'memories put into the context per invoke (0-50)', min: 0, max: 50 }),
    'exclude-sensitive': Flags.boolean({ description: 'memorize drops facts that look like credentials, card numbers or emails (on by default)', allowNo: true }),
    topic: Flags.string({ description: 'keep only facts about this topic (repeat for several; replaces the list)', multiple: true, exclusive: ['clear-topics'] }),
    'clear-topics': Flags.boolean({ description: 'keep facts about anything again' }),
    instructions: Flags.string({ description: "text appended to the model's extraction prompt ('' clears it)" }),
    knowledge: Flags.boolean({ description: 'offer the search_knowledge tool to the agent (on by default)', allowNo: true }),
  };

  async run() {
    const { args, flags } = await this.parse(MemoryPolicy);
    const api = memoryApi(await this.client(), args.agent, projectQuery(flags.project, flags.context));
    const patch = {
      ...(flags.enable ? { enabled: true } : flags.disable ? { enabled: false } : {}),
      ...(flags.scope ? { scope: flags.scope as 'user' | 'agent' } : {}),
      ...(flags['retention-days'] !== undefined ? { retention_days: flags['retention-days'] || null } : {}),
      ...(flags.inject !== undefined ? { inject: flags.inject } : {}),
      ...(flags['exclude-sensitive'] !== undefined ? { exclude_sensitive: flags['exclude-sensitive'] } : {}),
      ...(flags.topic ? { topics: flags.topic } : flags['clear-topics'] ? { topics: [] } : {}),
      ...(flags.instructions !== undefined ? { instructions: flags.instructions } : {}),
      ...(flags.knowledge !== undefined ? { knowledge_enabled: flags.knowledge } : {}),
    };
    const res = Object.keys(patch).length ? await api.setPolicy(patch) : await api.policy();
    this.fields({ ...res.policy, topics: res.policy.topics.join(', ') }, ['enabled', 'scope', 'retention_days', 'inject', 'exclude_sensitive', 'topics', 'instructions', 'knowledge_enabled']);
    return res;
  }
}
