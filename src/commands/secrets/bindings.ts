import { Args } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { pageFlags, pageQuery, projectFlag } from '../../cli/flags.js';
import { secretMapRoutes, type Binding } from '../../api/secrets.js';

export default class SecretsBindings extends BaseCommand {
  static override summary = "List secret bindings of the project, or of one agent";
  static override examples = ['<%= config.bin %> secrets bindings', '<%= config.bin %> secrets bindings support-bot --json'];
  static override args = { agent: Args.string({ required: false, description: 'agent name (omit for every binding of the project)' }) };
  static override flags = { project: projectFlag, ...pageFlags };

  async run() {
    const { args, flags } = await this.parse(SecretsBindings);
    const projectID = this.projectRef(flags.project, flags.context);
    const client = await this.client();
    const res = args.agent
      ? await client.call(secretMapRoutes.agentList, { params: { projectID, agent: args.agent } })
      : await client.call(secretMapRoutes.list, { params: { projectID }, query: pageQuery(flags) });
    this.table<Binding>(res.bindings, [
      { header: 'agent', get: (b) => b.agent },
      { header: 'env', get: (b) => b.env_name },
      { header: 'secret', get: (b) => b.secret_name },
      { header: 'pinned to', get: (b) => b.pinned_to },
      { header: 'updated', get: (b) => b.updated_at },
    ], 'no bindings');
    if ('next_page_token' in res && res.next_page_token) this.note(`more: --page-token ${res.next_page_token}`);
    return res;
  }
}
