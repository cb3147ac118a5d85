import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { MAXMEMORY_POLICIES, cacheRoutes, type MemorystoreView } from '../../api/cache.js';
import { instanceFields, projectFlag, resolveProjectId, saveCredential } from '../../cli/cache.js';
import { waitUntilReady } from '../../client/wait-ready.js';

export default class CacheCreate extends BaseCommand {
  static override summary = 'Create a cache instance (a real Redis server); the password is shown once';
  static override examples = [
    '<%= config.bin %> cache create sessions',
    '<%= config.bin %> cache create hot --size medium --policy allkeys-lru --no-persistence --wait',
    '<%= config.bin %> cache create public-cache --external --json',
  ];
  static override args = { name: Args.string({ description: 'instance name (lowercase letters, digits, dashes; 1-40)', required: true }) };
  static override flags = {
    ...projectFlag,
    size: Flags.string({ description: 'size class', options: ['small', 'medium', 'large'], default: 'small' }),
    policy: Flags.string({ description: 'maxmemory policy (eviction)', options: [...MAXMEMORY_POLICIES], default: 'noeviction' }),
    version: Flags.string({ description: 'server version; blank means the platform default' }),
    persistence: Flags.boolean({ description: 'append-only persistence (on by default)', default: true, allowNo: true }),
    'persistence-size': Flags.string({ description: 'volume size, fixed after create', default: '2Gi' }),
    'storage-class': Flags.string({ description: 'storage class; leave blank unless told otherwise' }),
    external: Flags.boolean({ description: 'open a TLS endpoint (the password is the only boundary)', default: false }),
    wait: Flags.boolean({ description: 'wait until the instance is ready', default: false }),
  };

  async run() {
    const { args, flags } = await this.parse(CacheCreate);
    const conn = await this.connect();
    const projectID = await resolveProjectId(conn.client, flags.project, flags.context);
    const res = await conn.client.call(cacheRoutes.create, {
      params: { projectID },
      body: {
        name: args.name,
        size_class: flags.size,
        maxmemory_policy: flags.policy,
        ...(flags.version !== undefined ? { version: flags.version } : {}),
        external_exposure: flags.external,
        persistence: { enabled: flags.persistence, size: flags['persistence-size'], ...(flags['storage-class'] ? { storage_class_name: flags['storage-class'] } : {}) },
      },
    });
    const keptIn = await saveCredential(conn.context.name, projectID, args.name, res.credential);
    let view: MemorystoreView = res.memorystore;
    if (flags.wait) view = await waitReady(this, conn.client, projectID, args.name);
    this.fields({ ...instanceFields(view), password: res.credential.password, uri: res.credential.uri });
    this.note(`\nThe password is shown only now (and kept for \`platform cache connect ${args.name}\` ${keptIn === 'keychain' ? 'in the keychain' : "in a 0600 file of the CLI's state directory"}).`);
    if (!flags.wait) this.note(`The instance is provisioning; check with \`platform cache get ${args.name}\`.`);
    // The CLI's noun (`cache`) rather than the API's (`memorystore`): docs/decisions/cli-guidance.md.
    const { memorystore: _api, ...rest } = res;
    return { ...rest, cache: view };
  }
}

/** Polls the instance until ready, failing with its message after two minutes. */
export async function waitReady(cmd: BaseCommand, client: Awaited<ReturnType<BaseCommand['client']>>, projectID: string, name: string): Promise<MemorystoreView> {
  return waitUntilReady(() => client.call(cacheRoutes.get, { params: { projectID, name } }), { what: name, next: `check it with \`platform cache get ${name}\`` });
}
