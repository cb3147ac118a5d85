import { gatewayRoutes } from '../../../api/gateway.js';
import { BaseCommand } from '../../../cli/base-command.js';
import { projectFlag } from '../../../cli/flags.js';
import { endpointArg, keyArg } from '../../../cli/gateway.js';
import { explain } from '../../../client/gateway.js';

export default class GatewayKeysRotate extends BaseCommand {
  static override summary = 'Rotate a key (project admin): a new secret works now, the old one keeps working through the overlap (24 h by default)';
  static override examples = ['<%= config.bin %> gateway keys rotate api k1a2b3c4d5e6', '<%= config.bin %> gateway keys rotate api k1a2b3c4d5e6 --json'];
  static override args = { endpoint: endpointArg, key: keyArg };
  static override flags = { project: projectFlag };

  async run() {
    const { args, flags } = await this.parse(GatewayKeysRotate);
    const projectID = this.projectRef(flags.project, flags.context);
    const res = await (await this.client())
      .call(gatewayRoutes.rotateKey, { params: { projectID, name: args.endpoint, keyID: args.key } })
      .catch((e: unknown) => explain(e, { endpoint: args.endpoint }));
    this.fields({ key_id: res.key.key_id, secret: res.secret, note: res.note, replaces: args.key });
    this.note(`\nthe secret is shown only now; ${args.key} keeps working until the overlap ends (see \`${this.config.bin} gateway keys list ${args.endpoint}\`)`);
    return res;
  }
}
