import { Args } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { readContexts, writeContexts } from '../../client/contexts.js';
import { UsageError } from '../../client/errors.js';

export default class ContextUse extends BaseCommand {
  static override summary = 'Switch the current context';
  static override examples = ['<%= config.bin %> context use prod', '<%= config.bin %> context use local'];
  static override args = { name: Args.string({ required: true, description: 'context name' }) };

  async run() {
    const { args } = await this.parse(ContextUse);
    const data = readContexts();
    if (!data.contexts.some((c) => c.name === args.name)) {
      throw new UsageError(`no context named ${args.name}`, 'run `platform context list`, or add one with `platform context add NAME --url URL`');
    }
    data.current = args.name;
    writeContexts(data);
    this.print(`current context: ${args.name}`);
    return { current: args.name };
  }
}
