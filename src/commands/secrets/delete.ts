import { Args } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { confirm, projectFlag, yesFlag } from '../../cli/flags.js';
import { secretRoutes } from '../../api/secrets.js';

export default class SecretsDelete extends BaseCommand {
  static override summary = 'Delete a secret and destroy every version (project admin; refused while bound)';
  static override examples = ['<%= config.bin %> secrets delete db-password', '<%= config.bin %> secrets delete db-password --yes --json'];
  static override args = { name: Args.string({ required: true, description: 'secret name' }) };
  static override flags = { project: projectFlag, yes: yesFlag };

  async run() {
    const { args, flags } = await this.parse(SecretsDelete);
    const projectID = this.projectRef(flags.project, flags.context);
    await confirm(flags.yes, `destroy every version of secret ${args.name}`);
    const res = await (await this.client()).call(secretRoutes.delete, { params: { projectID, name: args.name } });
    this.print(`deleted ${res.name}`);
    this.note(res.note);
    return res;
  }
}
