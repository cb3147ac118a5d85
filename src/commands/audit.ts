import { Flags } from '@oclif/core';
import { BaseCommand } from '../cli/base-command.js';
import { pageFlags, projectFlag, projectOrDefault } from '../cli/project-flag.js';
import { auditRoutes } from '../api/audit.js';

export default class Audit extends BaseCommand {
  static override summary = "Show a project's audit log, or the platform's (--platform), newest first";
  static override examples = [
    '<%= config.bin %> audit',
    '<%= config.bin %> audit --project web --page-size 20',
    '<%= config.bin %> audit --action member',
    '<%= config.bin %> audit --platform --action auth.login_failed',
    '<%= config.bin %> audit --platform --actor ops@example.com --json',
    '<%= config.bin %> audit --json',
  ];
  static override flags = {
    project: projectFlag,
    platform: Flags.boolean({
      description: 'the platform-scope log (platform admins): user roles, password resets, user deletion, org membership, personal keys, failed sign-ins'
    }),
    action: Flags.string({ description: 'only this action, or a dotted prefix (auth matches auth.login_failed)' }),
    actor: Flags.string({ description: 'only rows by this actor e-mail' }),
    ...pageFlags,
  };

  async run() {
    const { flags } = await this.parse(Audit);
    const client = await this.client();
    const query = { page_size: flags['page-size'], page_token: flags['page-token'], action: flags.action, actor: flags.actor };
    const res = flags.platform
      ? await client.call(auditRoutes.platform, { query })
      : await client.call(auditRoutes.list, { params: { projectID: projectOrDefault(flags.project, flags.context) }, query });
    this.table(
      res.entries,
      [
        { header: 'time', get: (e) => e.ts },
        { header: 'actor', get: (e) => e.actor },
        { header: 'action', get: (e) => e.action },
        { header: 'target', get: (e) => e.target },
        { header: 'details', get: (e) => (Object.keys(e.details).length ? JSON.stringify(e.details) : '') },
      ],
      'no audit entries',
    );
    if (res.next_page_token) this.note(`more: --page-token ${res.next_page_token}`);
    return res;
  }
}
