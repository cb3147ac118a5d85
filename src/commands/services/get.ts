import { Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag } from '../../cli/flags.js';
import { serviceArg, serviceFields, trafficColumns } from '../../cli/services.js';
import { formatTable } from '../../cli/render.js';
import { serverlessRoutes } from '../../api/serverless.js';
import { call } from '../../client/services.js';

export default class ServicesGet extends BaseCommand {
  static override summary = 'Show one service: state, addresses, the split being served and why it is not ready';
  static override examples = ['<%= config.bin %> services get hello', '<%= config.bin %> services get hello --conditions', '<%= config.bin %> services get hello --json'];
  static override args = { name: serviceArg };
  static override flags = { project: projectFlag, conditions: Flags.boolean({ description: 'also list the conditions (Ready, ServiceReady, TrafficAccepted, ...)' }) };

  async run() {
    const { args, flags } = await this.parse(ServicesGet);
    const projectID = this.projectRef(flags.project, flags.context);
    const s = await call((await this.client()).call(serverlessRoutes.get, { params: { projectID, name: args.name } }), { name: args.name });
    this.fields(serviceFields(s));
    if (s.active_traffic.length) this.print(`\n${formatTable(s.active_traffic, trafficColumns)}`);
    if (flags.conditions) {
      this.print(
        `\n${formatTable(s.conditions, [
          { header: 'condition', get: (c) => c.type },
          { header: 'status', get: (c) => c.status },
          { header: 'reason', get: (c) => c.reason },
          { header: 'message', get: (c) => c.message?.split('\n')[0] },
          { header: 'since', get: (c) => c.last_transition_time },
        ])}`,
      );
    }
    if (!s.ready && s.state !== 'pending') this.note(`\nsee each revision's state with \`${this.config.bin} services revisions ${s.name}\` and its output with \`${this.config.bin} services logs ${s.name}\``);
    return s;
  }
}
