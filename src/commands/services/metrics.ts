import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag } from '../../cli/flags.js';
import { serviceArg } from '../../cli/services.js';
import { formatTable } from '../../cli/render.js';
import { serverlessRoutes } from '../../api/serverless.js';
import { call } from '../../client/services.js';

export default class ServicesMetrics extends BaseCommand {
  static override summary = 'Show what a service runs right now: instances per revision, share of traffic, readiness (no history)';
  static override examples = ['<%= config.bin %> services metrics hello', '<%= config.bin %> services metrics hello --json'];
  static override args = { name: serviceArg };
  static override flags = { project: projectFlag };

  async run() {
    const { args, flags } = await this.parse(ServicesMetrics);
    const projectID = this.projectRef(flags.project, flags.context);
    const m = await call((await this.client()).call(serverlessRoutes.metrics, { params: { projectID, name: args.name } }), { name: args.name });
    this.fields({
      service: m.service,
      state: m.state,
      ready: m.ready,
      instances: `${m.instances.current} running (desired ${m.instances.desired})`,
      scaling: `${m.scaling.min_scale}-${m.scaling.max_scale} instances, ${m.scaling.container_concurrency} in flight each`,
      readiness: [m.readiness.reason, m.readiness.message].filter(Boolean).join(': ') || undefined,
      since: m.readiness.last_transition_time,
    });
    this.print(
      `\n${formatTable(
        m.revisions,
        [
          { header: 'revision', get: (r) => `${r.name}${r.latest_created ? ' (latest created)' : ''}${r.latest_ready && !r.latest_created ? ' (latest ready)' : ''}` },
          { header: 'state', get: (r) => r.state },
          { header: 'traffic', get: (r) => `${r.traffic_percent}%` },
          { header: 'instances', get: (r) => r.replicas },
        ],
        'no revisions',
      )}`,
    );
    if (m.note) this.note(`\n${m.note}`);
    return m;
  }
}
