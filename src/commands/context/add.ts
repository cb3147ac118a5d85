import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { readContexts, writeContexts } from '../../client/contexts.js';
import { UsageError } from '../../client/errors.js';

export default class ContextAdd extends BaseCommand {
  static override summary = 'Add a context for a remote platform';
  static override description = 'A context is a base URL plus its own credential and current project. Sign in afterwards with `platform login --context NAME`.';
  static override examples = [
    '<%= config.bin %> context add prod --url https://api.example.com',
    '<%= config.bin %> context add staging --url https://staging.example.com --use',
  ];
  static override args = { name: Args.string({ required: true, description: 'context name' }) };
  static override flags = {
    url: Flags.string({ required: true, description: 'base URL of the platform API' }),
    project: Flags.string({ description: 'current project for this context' }),
    use: Flags.boolean({ description: 'make it the current context' }),
  };

  async run() {
    const { args, flags } = await this.parse(ContextAdd);
    if (!/^[a-z0-9][a-z0-9_-]{0,62}$/i.test(args.name)) throw new UsageError('context names use letters, digits, - and _');
    let url: URL;
    try {
      url = new URL(flags.url);
    } catch {
      throw new UsageError(`not a URL: ${flags.url}`);
    }
    if (!/^https?:$/.test(url.protocol)) throw new UsageError('the URL must be http or https');
    const data = readContexts();
    if (data.contexts.some((c) => c.name === args.name)) {
      throw new UsageError(`a context named ${args.name} exists`, 'remove it first with `platform context remove`');
    }
    const ctx = { name: args.name, kind: 'remote' as const, url: url.toString().replace(/\/$/, ''), ...(flags.project ? { project: flags.project } : {}) };
    data.contexts.push(ctx);
    if (flags.use) data.current = args.name;
    writeContexts(data);
    this.print(`added context ${args.name} (${ctx.url})${flags.use ? ' and made it current' : ''}`);
    this.note(`sign in with \`platform login --context ${args.name}\``);
    return { ...ctx, current: data.current === args.name };
  }
}
