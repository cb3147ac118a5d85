import { Args } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag } from '../../cli/flags.js';
import { secretRoutes } from '../../api/secrets.js';

export default class SecretsVersions extends BaseCommand {
  static override summary = "List a secret's versions";
  static override examples = ['<%= config.bin %> secrets versions db-password', '<%= config.bin %> secrets versions db-password --json'];
  static override args = { name: Args.string({ required: true, description: 'secret name' }) };
  static override flags = { project: projectFlag };

  async run() {
    const { args, flags } = await this.parse(SecretsVersions);
    const projectID = this.projectRef(flags.project, flags.context);
    const res = await (await this.client()).call(secretRoutes.versions, { params: { projectID, name: args.name } });
    this.table(res.versions, [
      { header: 'version', get: (v) => (v.version === res.current_version ? `${v.version} (current)` : v.version) },
      { header: 'created', get: (v) => v.created_at },
      { header: 'destroyed', get: (v) => v.destroyed },
    ], 'no versions');
    return res;
  }
}
