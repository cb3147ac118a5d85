import { Args } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag } from '../../cli/flags.js';
import { secretRoutes } from '../../api/secrets.js';

export default class SecretsGet extends BaseCommand {
  static override summary = "One secret's metadata, versions and bindings (never the value; see `secrets reveal`)";
  static override examples = ['<%= config.bin %> secrets get db-password', '<%= config.bin %> secrets get db-password --json'];
  static override args = { name: Args.string({ required: true, description: 'secret name' }) };
  static override flags = { project: projectFlag };

  async run() {
    const { args, flags } = await this.parse(SecretsGet);
    const projectID = this.projectRef(flags.project, flags.context);
    const res = await (await this.client()).call(secretRoutes.get, { params: { projectID, name: args.name } });
    this.fields({
      name: res.name,
      current_version: res.current_version,
      created_at: res.created_at,
      updated_at: res.updated_at,
      versions: res.versions.map((v) => (v.destroyed ? `${v.version} (destroyed)` : String(v.version))),
      used_by: res.used_by?.map((u) => `${u.agent_slug}/${u.env_name}@${u.version ?? 'latest'}`) ?? 'nothing',
    });
    return res;
  }
}
