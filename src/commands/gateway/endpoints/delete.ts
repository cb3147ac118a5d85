import { gatewayRoutes } from '../../../api/gateway.js';
import { BaseCommand } from '../../../cli/base-command.js';
import { confirm, projectFlag, yesFlag } from '../../../cli/flags.js';
import { endpointArg } from '../../../cli/gateway.js';
import { explain } from '../../../client/gateway.js';
import { UsageError } from '../../../client/errors.js';

export default class GatewayEndpointsDelete extends BaseCommand {
  static override summary = 'Delete an endpoint (project admin): releases its address and revokes all its keys';
  static override examples = ['<%= config.bin %> gateway endpoints delete api', '<%= config.bin %> gateway endpoints delete api --yes --json'];
  static override args = { name: endpointArg };
  static override flags = { project: projectFlag, yes: yesFlag };

  async run() {
    const { args, flags } = await this.parse(GatewayEndpointsDelete);
    // --json never prompts, and never confirms on the user's behalf either.
    if (this.jsonEnabled() && !flags.yes) throw new UsageError(`deleting ${args.name} needs confirmation`, 'pass --yes');
    await confirm(flags.yes, `delete gateway endpoint ${args.name} and revoke its keys`);
    const projectID = this.projectRef(flags.project, flags.context);
    const client = await this.client();
    // 204: no body to parse.
    const path = await client.pathFor(gatewayRoutes.delete, { projectID, name: args.name }).catch((e: unknown) => explain(e, { endpoint: args.name }));
    await client.request('DELETE', path).catch((e: unknown) => explain(e, { endpoint: args.name }));
    this.print(`deleted ${args.name}`);
    return { name: args.name, deleted: true };
  }
}
