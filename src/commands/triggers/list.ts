import { BaseCommand } from '../../cli/base-command.js';
import { pageFlags, pageQuery, projectFlag } from '../../cli/flags.js';
import { triggerColumns } from '../../cli/triggers.js';
import { triggerRoutes } from '../../api/triggers.js';
import { callTrigger } from '../../client/triggers.js';

export default class TriggersList extends BaseCommand {
  static override summary = "List a project's triggers with the next fire time of each schedule";
  static override examples = ['<%= config.bin %> triggers list', '<%= config.bin %> triggers list --project shop --json'];
  static override flags = { project: projectFlag, ...pageFlags };

  async run() {
    const { flags } = await this.parse(TriggersList);
    const projectID = this.projectRef(flags.project, flags.context);
    const res = await callTrigger((await this.client()).call(triggerRoutes.list, { params: { projectID }, query: pageQuery(flags) }));
    this.table(res.triggers, triggerColumns, `no triggers; create one with \`${this.config.bin} triggers create NAME --target SVC --cron EXPR\``);
    if (res.next_page_token) this.note(`more: --page-token ${res.next_page_token}`);
    return res;
  }
}
