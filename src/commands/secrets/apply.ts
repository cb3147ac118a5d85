import { Args } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag } from '../../cli/flags.js';
import { secretMapRoutes, type ApplyRow } from '../../api/secrets.js';
import { ApiCallError } from '../../client/errors.js';
import { formatTable, type Column } from '../../cli/render.js';

export default class SecretsApply extends BaseCommand {
  static override summary = "Write every bound value into an agent's environment (all or nothing) and roll a revision";
  static override examples = ['<%= config.bin %> secrets apply support-bot', '<%= config.bin %> secrets apply support-bot --json'];
  static override args = { agent: Args.string({ required: true, description: 'agent name' }) };
  static override flags = { project: projectFlag };

  private readonly columns: Column<ApplyRow>[] = [
    { header: 'env', get: (r: ApplyRow) => r.env_name },
    { header: 'secret', get: (r: ApplyRow) => r.secret_name },
    { header: 'version', get: (r: ApplyRow) => r.version },
    { header: 'applied', get: (r: ApplyRow) => r.applied },
    { header: 'error', get: (r: ApplyRow) => r.error ?? '' },
  ];

  async run() {
    const { args, flags } = await this.parse(SecretsApply);
    const projectID = this.projectRef(flags.project, flags.context);
    let res;
    try {
      res = await (await this.client()).call(secretMapRoutes.apply, { params: { projectID, agent: args.agent } });
    } catch (e) {
      // 424: show which rows could not be read (on stderr: the command failed, stdout stays empty).
      const rows = e instanceof ApiCallError && e.status === 424 ? (e.body as { applied?: ApplyRow[] } | undefined)?.applied : undefined;
      if (rows && !this.jsonEnabled()) this.note(formatTable(rows, this.columns));
      throw e;
    }
    this.table(res.applied, this.columns.slice(0, 4), 'no bindings');
    this.note(res.note);
    return res;
  }
}

