import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { readContexts, writeContexts } from '../../client/contexts.js';
import { UsageError } from '../../client/errors.js';
import { checkServer, readCaCert } from '../../client/server-check.js';

export default class ContextAdd extends BaseCommand {
  static override summary = 'Add a context for a remote platform';
  static override description =
    'A context is a base URL plus its own credential, current project and, for a server whose certificate comes from a private authority, the CA to trust (--ca-cert; kept in the context and used by every request of it). The server is checked before the context is saved: it must answer, its certificate must be trusted, and its version is compared with the CLI\'s (a different release line is warned about). --no-check saves without asking the server (offline setups). Sign in afterwards with `platform login --context NAME`.';
  static override examples = [
    '<%= config.bin %> context add prod https://platform.example.com',
    '<%= config.bin %> context add team https://platform.internal:8443 --ca-cert team-ca.pem --use',
    '<%= config.bin %> context add staging https://staging.example.com --no-check',
  ];
  static override args = {
    name: Args.string({ required: true, description: 'context name' }),
    url: Args.string({ description: 'base URL of the platform API' }),
  };
  static override flags = {
    url: Flags.string({ description: 'base URL of the platform API (same as the URL argument)' }),
    'ca-cert': Flags.string({ description: "PEM file of the CA that signed the server's certificate" }),
    check: Flags.boolean({ description: 'check the server (reachable, certificate, version) before saving', default: true, allowNo: true }),
    project: Flags.string({ char: 'p', description: 'current project for this context' }),
    use: Flags.boolean({ description: 'make it the current context' }),
  };

  async run() {
    const { args, flags } = await this.parse(ContextAdd);
    if (!/^[a-z0-9][a-z0-9_-]{0,62}$/i.test(args.name)) throw new UsageError('context names use letters, digits, - and _');
    if (args.url && flags.url && args.url !== flags.url) throw new UsageError('give the URL once: as the argument or as --url');
    const given = args.url ?? flags.url;
    if (!given) throw new UsageError('a URL is required', 'e.g. `platform context add prod https://platform.example.com`');
    let url: URL;
    try {
      url = new URL(given);
    } catch {
      throw new UsageError(`not a URL: ${given}`);
    }
    if (!/^https?:$/.test(url.protocol)) throw new UsageError('the URL must be http or https');
    const ca = flags['ca-cert'] ? readCaCert(flags['ca-cert']) : undefined;
    if (ca && url.protocol !== 'https:') throw new UsageError('--ca-cert needs an https URL');
    const data = readContexts();
    if (data.contexts.some((c) => c.name === args.name)) {
      throw new UsageError(`a context named ${args.name} exists`, 'remove it first with `platform context remove`');
    }
    const base = url.toString().replace(/\/$/, '');
    const check = flags.check ? await checkServer(base, ca, this.config.version) : undefined;
    if (check?.warning) process.stderr.write(`warning: ${check.warning}\n`);
    const ctx = { name: args.name, kind: 'remote' as const, url: base, ...(flags.project ? { project: flags.project } : {}), ...(ca ? { ca_cert: ca } : {}) };
    data.contexts.push(ctx);
    if (flags.use) data.current = args.name;
    writeContexts(data);
    this.print(`added context ${args.name} (${ctx.url}${check ? `, platform ${check.version}` : ', not checked'})${flags.use ? ' and made it current' : ''}`);
    this.note(`sign in with \`platform login --context ${args.name}\` (or \`--web\` to approve in a browser)`);
    const { ca_cert: _ca, ...shown } = ctx;
    return { ...shown, ...(ca ? { custom_ca: true } : {}), ...(check ? { server_version: check.version } : { checked: false }), current: data.current === args.name };
  }
}
