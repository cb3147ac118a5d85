import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag } from '../../cli/flags.js';
import { secretRoutes } from '../../api/secrets.js';

export default class SecretsToken extends BaseCommand {
  static override summary = 'Mint a short-lived read token for one secret or for the whole project (Vault KV v2 compatible)';
  static override examples = [
    '<%= config.bin %> secrets token db-password --ttl 60',
    '<%= config.bin %> secrets token --json',
    'VAULT_ADDR=<addr> VAULT_TOKEN=<token> vault kv get -mount=secret <project_short>/db-password',
  ];
  static override args = { name: Args.string({ required: false, description: 'secret name (omit for a project-wide token)' }) };
  static override flags = {
    project: projectFlag,
    ttl: Flags.integer({ description: 'lifetime in seconds (default 300; clamped to 3600)', min: 1 }),
  };

  async run() {
    const { args, flags } = await this.parse(SecretsToken);
    const projectID = this.projectRef(flags.project, flags.context);
    const body = flags.ttl ? { ttl_seconds: flags.ttl } : {};
    const client = await this.client();
    const res = args.name
      ? await client.call(secretRoutes.issueToken, { params: { projectID, name: args.name }, body })
      : await client.call(secretRoutes.issueProjectToken, { params: { projectID }, body });
    this.fields({ token: res.token, ttl_seconds: res.ttl_seconds, addr: res.read.addr, path: res.read.path });
    this.note(res.note);
    return res;
  }
}
