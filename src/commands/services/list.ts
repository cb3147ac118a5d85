import { BaseCommand } from '../../cli/base-command.js';
import { pageFlags, pageQuery, projectFlag } from '../../cli/flags.js';
import { serviceColumns } from '../../cli/services.js';
import { serverlessRoutes } from '../../api/serverless.js';
import { call } from '../../client/services.js';

export default class ServicesList extends BaseCommand {
  static override summary = "List a project's services with the split each one serves";
  static override examples = ['<%= config.bin %> services list', '<%= config.bin %> services list --project shop-api --json'];
  static override flags = { project: projectFlag, ...pageFlags };

  async run() {
    const { flags } = await this.parse(ServicesList);
    const projectID = this.projectRef(flags.project, flags.context);
    const res = await call((await this.client()).call(serverlessRoutes.list, { params: { projectID }, query: pageQuery(flags) }), {});
    this.table(res.services, serviceColumns, `no services; create one with \`${this.config.bin} services create NAME --image IMAGE\` or \`${this.config.bin} services deploy DIR\``);
    if (res.next_page_token) this.note(`more: --page-token ${res.next_page_token}`);
    return res;
  }
}
