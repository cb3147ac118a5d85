import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag } from '../../cli/flags.js';
import { secretRoutes } from '../../api/secrets.js';

export default class SecretsReveal extends BaseCommand {
  static override summary = 'Print a secret value (project admin); the reveal and its reason go to the audit log';
  static override examples = [
    '<%= config.bin %> secrets reveal db-password --reason "rotate replica credentials"',
    '<%= config.bin %> secrets reveal db-password --version 2 --reason "compare" --json',
  ];
  static override args = { name: Args.string({ required: true, description: 'secret name' }) };
  static override flags = {
    project: projectFlag,
    reason: Flags.string({ required: true, description: 'why you need the value (recorded in the audit log)' }),
    version: Flags.integer({ description: 'version to reveal (default: current)', min: 1 }),
  };

  async run() {
    const { args, flags } = await this.parse(SecretsReveal);
    const projectID = this.projectRef(flags.project, flags.context);
    const res = await (await this.client()).call(secretRoutes.reveal, {
      params: { projectID, name: args.name },
      body: { reason: flags.reason, ...(flags.version ? { version: flags.version } : {}) },
    });
    // Only the value on stdout, so `$(platform secrets reveal ...)` captures exactly it.
    if (!this.jsonEnabled()) process.stdout.write(res.value + (process.stdout.isTTY ? '\n' : ''));
    this.note(`version ${res.version}; ${res.note}`);
    return res;
  }
}
