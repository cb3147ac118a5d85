import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../../cli/base-command.js';
import { projectFlag, projectQuery } from '../../../cli/agent-flags.js';
import { parseKeyValues } from '../../../cli/key-values.js';
import { readSecretValue } from '../../../cli/prompt.js';
import { UsageError } from '../../../client/errors.js';
import { agentRoutes } from '../../../api/agents.js';

/**
 * Sets secrets as `gh secret set` does: `KEY` alone takes its value from --from-file (bytes as
 * they are), from stdin when piped (one trailing newline dropped) or from a hidden prompt.
 * KEY=VALUE still works, with a warning: arguments end up in shell history and process listings.
 */
export default class AgentsSecretsSet extends BaseCommand {
  static override summary = 'Set a secret on one agent only, unversioned (rolls a new revision; value from stdin, a file or a hidden prompt); shared, versioned secrets: `platform secrets set`';
  static override examples = [
    "printf '%s' \"$API_TOKEN\" | <%= config.bin %> agents secrets set hello API_TOKEN",
    '<%= config.bin %> agents secrets set hello TLS_KEY --from-file ./key.pem',
    '<%= config.bin %> agents secrets set hello API_TOKEN        # prompts without echo',
  ];
  static override strict = false;
  static override args = {
    name: Args.string({ description: 'agent or function name', required: true }),
    key: Args.string({ description: 'secret name (its value from stdin, --from-file or a prompt); KEY=VALUE also works but warns' }),
  };
  static override flags = {
    project: projectFlag,
    'from-file': Flags.string({ description: 'read the value from this file, byte for byte' }),
  };

  async run() {
    const { args, argv, flags } = await this.parse(AgentsSecretsSet);
    const items = (argv as string[]).slice(1);
    const bare = items.filter((i) => !i.includes('='));
    const inline = items.filter((i) => i.includes('='));
    if (bare.length > 1) throw new UsageError(`one secret at a time takes its value from stdin or a file; got ${bare.join(', ')}`);
    if (!bare.length && flags['from-file']) throw new UsageError('--from-file needs the secret name: agents secrets set NAME KEY --from-file FILE');
    if (!items.length) throw new UsageError('give the secret name: agents secrets set NAME KEY (the value comes from stdin, --from-file or a prompt)');
    const set = inline.length ? parseKeyValues(inline) : {};
    if (inline.length) {
      process.stderr.write(
        `warning: a secret value given on the command line stays in your shell history and shows in process listings; pipe it instead: printf '%s' "$VALUE" | ${this.config.bin} agents secrets set ${args.name} KEY (or --from-file FILE)\n`,
      );
    }
    if (bare.length) {
      const value = await readSecretValue(flags['from-file']);
      if (!value) throw new UsageError(`the value of ${bare[0]} is empty`, 'pipe the value on stdin or pass --from-file FILE');
      set[bare[0]!] = value;
    }
    const res = await (await this.client()).call(agentRoutes.secretsPatch, { params: { name: args.name }, query: projectQuery(flags.project, flags.context), body: { set } });
    this.print(`updated ${Object.keys(set).join(', ')} on ${args.name}`);
    return res;
  }
}
