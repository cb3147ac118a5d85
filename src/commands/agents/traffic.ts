import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag } from '../../cli/flags.js';
import { projectQuery } from '../../cli/agent-flags.js';
import { agentTraffic, requestedSplit } from '../../client/agent-traffic.js';

export default class AgentsTraffic extends BaseCommand {
  static override summary = "Show or replace the traffic split between an agent's revisions, or pin one revision";
  static override description =
    'REV is `latest` (follows every new revision), a revision name (hello-00002) or its number (2). With --to the percentages must sum to 100 (the syntax of `platform services traffic`). --pin REV sends every request to REV; a pinned revision keeps its requests across later deploys until `--pin latest`. Without --to or --pin, prints the split. Requests are shared by smooth weighted round robin.';
  static override examples = [
    '<%= config.bin %> agents traffic hello',
    '<%= config.bin %> agents traffic hello --pin 1',
    '<%= config.bin %> agents traffic hello --to hello-00001=90 --to latest=10',
    '<%= config.bin %> agents traffic hello --pin latest --json',
  ];
  static override args = { name: Args.string({ description: 'agent or function name', required: true }) };
  static override flags = {
    project: projectFlag,
    to: Flags.string({ description: 'REV=PERCENT (repeatable; the whole split)', multiple: true }),
    pin: Flags.string({ description: 'REV: every request to this revision (`latest` to follow new revisions again)' }),
  };

  async run() {
    const { args, flags } = await this.parse(AgentsTraffic);
    const res = await agentTraffic(await this.client(), { name: args.name, query: projectQuery(flags.project, flags.context), to: flags.to, pin: flags.pin });
    this.print(`split: ${requestedSplit(res.traffic)}`);
    this.table(res.active_traffic, [
      { header: 'revision', get: (t) => t.revision_name },
      { header: 'percent', get: (t) => `${t.percent}%` },
    ], 'nothing is served yet (no revision serves)');
    return res;
  }
}
