import { Flags } from '@oclif/core';
import { gatewayRoutes } from '../../../api/gateway.js';
import { BaseCommand } from '../../../cli/base-command.js';
import { projectFlag } from '../../../cli/flags.js';
import { endpointArg, endpointFields, settingFlags, settingsBody } from '../../../cli/gateway.js';
import { explain, parseTarget } from '../../../client/gateway.js';
import { UsageError } from '../../../client/errors.js';

export default class GatewayEndpointsUpdate extends BaseCommand {
  static override summary = 'Change an endpoint (project admin); flags not given keep their values';
  static override examples = [
    '<%= config.bin %> gateway endpoints update api --rate 10/second',
    '<%= config.bin %> gateway endpoints update api --rate none',
    '<%= config.bin %> gateway endpoints update api --hostname api.example.com',
    '<%= config.bin %> gateway endpoints update api --shared-address --target serverless/web-v2',
  ];
  static override args = { name: endpointArg };
  static override flags = {
    project: projectFlag,
    target: Flags.string({ description: 'KIND[/NAME]: re-target the endpoint' }),
    hostname: Flags.string({ description: 'move the endpoint to this claimed custom hostname' }),
    'shared-address': Flags.boolean({ description: 'move the endpoint back to its shared address', exclusive: ['hostname'] }),
    'allow-any': Flags.boolean({ description: 'empty the allow list (any address)', exclusive: ['allow'] }),
    ...settingFlags,
    'rate-key': Flags.string({ description: 'with --rate: what the limit counts per', options: ['client_ip', 'api_key'] }),
  };

  async run() {
    const { args, flags } = await this.parse(GatewayEndpointsUpdate);
    const projectID = this.projectRef(flags.project, flags.context);
    const body = {
      ...settingsBody(flags),
      ...(flags['allow-any'] ? { ip_allowlist: [] } : {}),
      ...(flags.target ? { target: parseTarget(flags.target) } : {}),
      ...(flags.hostname ? { hostname: flags.hostname } : flags['shared-address'] ? { hostname: null } : {}),
    };
    if (!Object.keys(body).length) throw new UsageError('nothing to change', 'pass at least one of --target, --auth, --allow, --rate, --hostname');
    const e = await (await this.client()).call(gatewayRoutes.patch, { params: { projectID, name: args.name }, body }).catch((err: unknown) => explain(err, { endpoint: args.name }));
    this.fields(endpointFields(e));
    return e;
  }
}
