import { Args, Flags } from '@oclif/core';
import { gatewayRoutes } from '../../api/gateway.js';
import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag } from '../../cli/flags.js';
import { explain, testEndpoint } from '../../client/gateway.js';
import { AbortError } from '../../client/errors.js';

export default class GatewayTest extends BaseCommand {
  static override summary = 'Send one request to an endpoint and show what the gateway decided';
  static override description =
    'Sends GET PATH to the endpoint\'s address (a local *.localhost address goes to the daemon with the endpoint\'s Host header) and prints the status, the gateway\'s decision (endpoint, auth, caller, target) or its reason for refusing, and the rate-limit headers. Exits 1 when the answer is not 2xx.';
  static override examples = ['<%= config.bin %> gateway test api', '<%= config.bin %> gateway test api --key gk_secret_... --path /health --json'];
  static override args = { endpoint: Args.string({ description: 'endpoint name', required: true }) };
  static override flags = {
    project: projectFlag,
    key: Flags.string({ description: 'an API key to send (X-API-Key)', env: 'PLATFORM_GATEWAY_KEY' }),
    path: Flags.string({ description: 'path and query to request', default: '/' }),
  };

  async run() {
    const { args, flags } = await this.parse(GatewayTest);
    const projectID = this.projectRef(flags.project, flags.context);
    const client = await this.client();
    const e = await client.call(gatewayRoutes.get, { params: { projectID, name: args.endpoint } }).catch((err: unknown) => explain(err, { endpoint: args.endpoint }));
    const r = await testEndpoint(e, client.baseUrl, { key: flags.key, path: flags.path, ca: client.ca }).catch((err: Error) => {
      throw new AbortError(`could not reach ${e.url}: ${err.message}`, 'check the endpoint with `platform gateway endpoints get NAME`');
    });
    const { body, ...shown } = r;
    this.fields({ ...shown, rate_limit: r.rate_limit ? `${r.rate_limit.remaining}/${r.rate_limit.limit} left, resets in ${r.rate_limit.reset} s${r.rate_limit.retry_after ? `, retry after ${r.rate_limit.retry_after} s` : ''}` : undefined, state: e.state });
    if (r.status >= 200 && r.status < 300) this.print(`\n${body.slice(0, 500)}`);
    if (r.status >= 300) {
      if (this.jsonEnabled()) {
        process.stdout.write(`${JSON.stringify({ ...r, state: e.state }, null, 2)}\n`);
        return this.exit(1);
      }
      this.exit(1);
    }
    return { ...r, state: e.state };
  }
}
