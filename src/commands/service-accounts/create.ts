import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag, projectOrDefault } from '../../cli/project-flag.js';
import { serviceAccountRoutes } from '../../api/service-accounts.js';

export default class ServiceAccountsCreate extends BaseCommand {
  static override summary = 'Create a service account (a project member for automation)';
  static override description = 'Names are DNS labels and reserved for good: a deleted name cannot be used again in the project. Create a key next with `platform service-accounts keys create`.';
  static override examples = [
    '<%= config.bin %> service-accounts create ci-deployer',
    '<%= config.bin %> service-accounts create ci-deployer --display-name "GitHub Actions" --role admin --project web',
    '<%= config.bin %> service-accounts create ci-deployer --json',
  ];
  static override args = { name: Args.string({ required: true, description: 'account name (lowercase DNS label)' }) };
  static override flags = {
    project: projectFlag,
    'display-name': Flags.string({ description: 'human-readable name' }),
    role: Flags.string({ description: 'project role', options: ['admin', 'member'], default: 'member' }),
  };

  async run() {
    const { args, flags } = await this.parse(ServiceAccountsCreate);
    const res = await (await this.client()).call(serviceAccountRoutes.create, {
      params: { projectID: projectOrDefault(flags.project, flags.context) },
      body: { name: args.name, role: flags.role as 'admin' | 'member', ...(flags['display-name'] ? { display_name: flags['display-name'] } : {}) },
    });
    const sa = res.service_account;
    this.fields({ name: sa.name, email: sa.email, display_name: sa.display_name, role: sa.role, id: sa.id, created_at: sa.created_at });
    this.note(res.note);
    return res;
  }
}
