import { gatewayRoutes } from '../../../api/gateway.js';
import { BaseCommand } from '../../../cli/base-command.js';
import { projectFlag, confirm, yesFlag } from '../../../cli/flags.js';
import { hostnameArg } from '../../../cli/gateway.js';
import { explain } from '../../../client/gateway.js';

export default class GatewayDomainsRelease extends BaseCommand {
  static override summary = 'Release a claimed hostname (project admin); refused while an endpoint is published on it';
  static override examples = ['<%= config.bin %> gateway domains release api.example.com'];
  static override args = { hostname: hostnameArg };
  static override flags = { project: projectFlag, yes: yesFlag };

  async run() {
    const { args, flags } = await this.parse(GatewayDomainsRelease);
    await confirm(flags.yes, `release ${args.hostname} (anyone may claim it afterwards)`);
    const projectID = this.projectRef(flags.project, flags.context);
    const client = await this.client();
    const path = await client.pathFor(gatewayRoutes.releaseDomain, { projectID, domain: args.hostname }).catch((e: unknown) => explain(e, {}));
    await client.request('DELETE', path).catch((e: unknown) => explain(e, {}));
    this.print(`released ${args.hostname}`);
    return { hostname: args.hostname, released: true };
  }
}
