import { Args, Flags } from '@oclif/core';
import { gatewayRoutes } from '../../../api/gateway.js';
import { BaseCommand } from '../../../cli/base-command.js';
import { projectFlag } from '../../../cli/flags.js';
import { endpointFields, settingFlags, settingsBody } from '../../../cli/gateway.js';
import { explain, parseTarget } from '../../../client/gateway.js';

export default class GatewayEndpointsCreate extends BaseCommand {
  static override summary = 'Create a gateway endpoint (project admin): its address is reserved, unpublished until `publish`';
  static override examples = [
    '<%= config.bin %> gateway endpoints create hello --target function/hello',
    '<%= config.bin %> gateway endpoints create api --target serverless/web --auth apikey --rate 100/minute --rate-key api_key',
    '<%= config.bin %> gateway endpoints create orders --target agent/orders --auth jwt --issuer https://id.example.com/ --jwks-uri https://id.example.com/.well-known/jwks.json --audience orders',
    '<%= config.bin %> gateway endpoints create search --target vectordb --allow 10.0.0.0/8 --allow 2001:db8::/32 --json',
  ];
  static override args = { name: Args.string({ description: 'endpoint name (lowercase letters, digits, hyphens; 1-40): the first label of its address', required: true }) };
  static override flags = {
    project: projectFlag,
    target: Flags.string({ description: 'KIND[/NAME]: agent, function, serverless, container, memorystore with a name; vectordb, pubsub without', required: true }),
    hostname: Flags.string({ description: 'serve on this claimed custom hostname instead of the shared address' }),
    ...settingFlags,
  };

  async run() {
    const { args, flags } = await this.parse(GatewayEndpointsCreate);
    const projectID = this.projectRef(flags.project, flags.context);
    const body = {
      name: args.name,
      target: parseTarget(flags.target),
      ...(flags.hostname ? { domain: { kind: 'custom' as const, hostname: flags.hostname } } : {}),
      ...settingsBody(flags),
    };
    const e = await (await this.client()).call(gatewayRoutes.create, { params: { projectID }, body }).catch((err: unknown) => explain(err, { endpoint: args.name }));
    this.fields(endpointFields(e));
    this.note(`\nnext: ${e.auth.mode === 'apikey' ? `\`${this.config.bin} gateway keys create ${e.name}\`, then ` : ''}\`${this.config.bin} gateway endpoints publish ${e.name}\``);
    return e;
  }
}
