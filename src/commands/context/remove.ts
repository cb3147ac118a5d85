import { Args } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { confirm, yesFlag } from '../../cli/flags.js';
import { readContexts, writeContexts } from '../../client/contexts.js';
import { CredentialStore } from '../../client/credentials.js';
import { UsageError } from '../../client/errors.js';

export default class ContextRemove extends BaseCommand {
  static override summary = 'Remove a context and forget its credential';
  static override examples = ['<%= config.bin %> context remove staging'];
  static override args = { name: Args.string({ required: true, description: 'context name' }) };
  static override flags = { yes: yesFlag };

  async run() {
    const { args, flags } = await this.parse(ContextRemove);
    await confirm(flags.yes, `remove the context ${args.name} and forget its stored credential`);
    if (args.name === 'local') throw new UsageError('the local context cannot be removed');
    const data = readContexts();
    if (!data.contexts.some((c) => c.name === args.name)) throw new UsageError(`no context named ${args.name}`);
    data.contexts = data.contexts.filter((c) => c.name !== args.name);
    if (data.current === args.name) data.current = 'local';
    writeContexts(data);
    await new CredentialStore().delete(args.name);
    this.print(`removed context ${args.name}; current context: ${data.current}`);
    return { removed: args.name, current: data.current };
  }
}
