import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag } from '../../cli/flags.js';
import { readSecretValue } from '../../cli/prompt.js';
import { UsageError } from '../../client/errors.js';
import { secretRoutes } from '../../api/secrets.js';

/**
 * Stores a value: from --from-file (bytes as they are), from stdin when piped (one trailing
 * newline dropped, so `echo VALUE |` does what people mean), or from a hidden prompt. Never from
 * an argument: arguments end up in shell history and process listings.
 */
export default class SecretsSet extends BaseCommand {
  static override summary = 'Create a shared project secret or store a new version of it (value from stdin, a file or a hidden prompt); bind it to agents with `secrets bind`';
  static override examples = [
    "printf '%s' \"$DB_PASSWORD\" | <%= config.bin %> secrets set db-password",
    '<%= config.bin %> secrets set tls-key --from-file ./key.pem',
    '<%= config.bin %> secrets set api-token        # prompts without echo',
  ];
  static override args = { name: Args.string({ required: true, description: 'secret name (letters, digits, - and _; up to 63)' }) };
  static override flags = {
    project: projectFlag,
    'from-file': Flags.string({ description: 'read the value from this file, byte for byte' }),
  };

  async run() {
    const { args, flags } = await this.parse(SecretsSet);
    const projectID = this.projectRef(flags.project, flags.context);
    const value = await readSecretValue(flags['from-file']);
    if (!value) throw new UsageError('the value is empty', 'pipe the value on stdin or pass --from-file FILE');
    const res = await (await this.client()).call(secretRoutes.write, { params: { projectID }, body: { name: args.name, value } });
    this.print(`${res.created ? 'created' : 'rotated'} ${res.name}: version ${res.version}`);
    this.note(res.note);
    return res;
  }
}
