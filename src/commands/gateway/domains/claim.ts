import { Flags } from '@oclif/core';
import { gatewayRoutes } from '../../../api/gateway.js';
import { BaseCommand } from '../../../cli/base-command.js';
import { projectFlag } from '../../../cli/flags.js';
import { hostnameArg } from '../../../cli/gateway.js';
import { explain } from '../../../client/gateway.js';

export default class GatewayDomainsClaim extends BaseCommand {
  static override summary = 'Claim a custom hostname (project admin); it is verified once its CNAME record resolves';
  static override examples = ['<%= config.bin %> gateway domains claim api.example.com', '<%= config.bin %> gateway domains claim api.example.com --note production --json'];
  static override args = { hostname: hostnameArg };
  static override flags = { project: projectFlag, note: Flags.string({ description: 'what the hostname is for' }) };

  async run() {
    const { args, flags } = await this.parse(GatewayDomainsClaim);
    const projectID = this.projectRef(flags.project, flags.context);
    const d = await (await this.client())
      .call(gatewayRoutes.claimDomain, { params: { projectID }, body: { hostname: args.hostname, ...(flags.note ? { note: flags.note } : {}) } })
      .catch((e: unknown) => explain(e, {}));
    this.fields({ hostname: d.hostname, verified: d.verified, record: `${d.record.name} CNAME ${d.record.value}`, note: d.note });
    this.note(`\nnext: set the CNAME record at your DNS provider; the platform verifies it on its next sweep (\`${this.config.bin} gateway domains list\`)`);
    return d;
  }
}
