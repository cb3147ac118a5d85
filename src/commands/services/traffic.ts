import { Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag } from '../../cli/flags.js';
import { serviceArg, trafficColumns, waitFlags, waitWithProgress } from '../../cli/services.js';
import { serverlessRoutes } from '../../api/serverless.js';
import { call, requestedSummary, trafficFrom } from '../../client/services.js';
import { formatTable } from '../../cli/render.js';

export default class ServicesTraffic extends BaseCommand {
  static override summary = 'Replace the whole traffic split between revisions; tags give a revision its own address';
  static override description =
    'REVISION is `latest` (follows every new ready revision), a revision name (hello-00002) or its number (2). Percentages must sum to 100. --tag REVISION=TAG gives that revision the address http://TAG-NAME-SHORT.apps.localhost:PORT; a tagged revision outside --to gets 0 percent and only its address. Without --to and --tag, prints the current split.';
  static override examples = [
    '<%= config.bin %> services traffic hello',
    '<%= config.bin %> services traffic hello --to 1=50 --to latest=50',
    '<%= config.bin %> services traffic hello --to latest=100 --tag 1=old --wait',
    '<%= config.bin %> services traffic hello --to hello-00002=90 --to hello-00003=10 --tag hello-00003=canary --json',
  ];
  static override args = { name: serviceArg };
  static override flags = {
    project: projectFlag,
    to: Flags.string({ description: 'REVISION=PERCENT (repeatable; the whole split)', multiple: true }),
    tag: Flags.string({ description: 'REVISION=TAG (repeatable)', multiple: true }),
    ...waitFlags,
  };

  async run() {
    const { args, flags } = await this.parse(ServicesTraffic);
    const projectID = this.projectRef(flags.project, flags.context);
    const traffic = flags.to?.length || flags.tag?.length ? trafficFrom(args.name, flags.to, flags.tag) : undefined;
    const client = await this.client();
    const ref = { projectID, name: args.name };
    const params = { projectID, name: args.name };
    let service;
    if (!traffic) {
      service = await call(client.call(serverlessRoutes.get, { params }), ref);
    } else {
      service = await call(client.call(serverlessRoutes.setTraffic, { params, body: { traffic } }), ref);
      if (flags.wait) service = (await waitWithProgress(client, ref, { json: this.jsonEnabled(), timeout: flags['wait-timeout'], split: true })).service;
    }
    this.print(`requested: ${requestedSummary(service)}`);
    this.print(`served:\n${formatTable(service.active_traffic, trafficColumns, '  nothing yet (no revision is ready)')}`);
    return service;
  }
}
