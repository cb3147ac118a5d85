import { Flags } from '@oclif/core';
import { gatewayRoutes } from '../../../api/gateway.js';
import { BaseCommand } from '../../../cli/base-command.js';
import { projectFlag } from '../../../cli/flags.js';
import { endpointArg } from '../../../cli/gateway.js';
import { explain } from '../../../client/gateway.js';

export default class GatewayKeysCreate extends BaseCommand {
  static override summary = 'Mint a key for an apikey endpoint (project admin); the secret is printed once, only its hash is kept';
  static override examples = ['<%= config.bin %> gateway keys create api --note mobile-app', '<%= config.bin %> gateway keys create api --expires-in-days 90 --json'];
  static override args = { endpoint: endpointArg };
  static override flags = {
    project: projectFlag,
    note: Flags.string({ description: 'what the key is for' }),
    'expires-in-days': Flags.integer({ description: 'the key stops working after this many days (default: never)', min: 1, max: 3650 }),
  };

  async run() {
    const { args, flags } = await this.parse(GatewayKeysCreate);
    const projectID = this.projectRef(flags.project, flags.context);
    const body = { ...(flags.note ? { note: flags.note } : {}), ...(flags['expires-in-days'] ? { expires_in_days: flags['expires-in-days'] } : {}) };
    const res = await (await this.client()).call(gatewayRoutes.createKey, { params: { projectID, name: args.endpoint }, body }).catch((e: unknown) => explain(e, { endpoint: args.endpoint }));
    this.fields({ key_id: res.key.key_id, secret: res.secret, note: res.note, expires_at: res.key.expires_at ?? 'never' });
    this.note('\nthe secret is shown only now: store it; send it as X-API-Key (or Authorization: Bearer)');
    return res;
  }
}
