import { gatewayRoutes } from '../../../api/gateway.js';
import { BaseCommand } from '../../../cli/base-command.js';
import { projectFlag, confirm, yesFlag } from '../../../cli/flags.js';
import { endpointArg, keyArg } from '../../../cli/gateway.js';
import { explain } from '../../../client/gateway.js';

export default class GatewayKeysRevoke extends BaseCommand {
  static override summary = 'Revoke a key at once (project admin)';
  static override examples = ['<%= config.bin %> gateway keys revoke api k1a2b3c4d5e6'];
  static override args = { endpoint: endpointArg, key: keyArg };
  static override flags = { project: projectFlag, yes: yesFlag };

  async run() {
    const { args, flags } = await this.parse(GatewayKeysRevoke);
    await confirm(flags.yes, `revoke key ${args.key} of endpoint ${args.endpoint}`);
    const projectID = this.projectRef(flags.project, flags.context);
    const client = await this.client();
    const path = await client.pathFor(gatewayRoutes.revokeKey, { projectID, name: args.endpoint, keyID: args.key }).catch((e: unknown) => explain(e, { endpoint: args.endpoint }));
    await client.request('DELETE', path).catch((e: unknown) => explain(e, { endpoint: args.endpoint }));
    this.print(`revoked ${args.key}`);
    return { key_id: args.key, revoked: true };
  }
}
