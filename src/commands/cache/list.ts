import { Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { cacheRoutes } from '../../api/cache.js';
import { projectFlag, resolveProjectId } from '../../cli/cache.js';

export default class CacheList extends BaseCommand {
  static override summary = 'List the cache instances of a project';
  static override examples = ['<%= config.bin %> cache list', '<%= config.bin %> cache list --project my-project --json'];
  static override flags = {
    ...projectFlag,
    'page-size': Flags.integer({ description: 'instances per page (1-200)', min: 1, max: 200 }),
    'page-token': Flags.string({ description: 'token from the previous page' }),
  };

  async run() {
    const { flags } = await this.parse(CacheList);
    const client = await this.client();
    const projectID = await resolveProjectId(client, flags.project, flags.context);
    const res = await client.call(cacheRoutes.list, { params: { projectID }, query: { page_size: flags['page-size'], page_token: flags['page-token'] } });
    this.table(
      res.memorystores,
      [
        { header: 'name', get: (m) => m.name },
        { header: 'state', get: (m) => m.state },
        { header: 'ready', get: (m) => m.ready },
        { header: 'size', get: (m) => m.size_class },
        { header: 'policy', get: (m) => m.maxmemory_policy },
        { header: 'persistence', get: (m) => (m.persistence.enabled ? m.persistence.size : 'off') },
        { header: 'address', get: (m) => `${m.connection.host}:${m.connection.port}` },
        { header: 'external', get: (m) => m.external_endpoint ?? (m.external_exposure ? 'pending' : undefined) },
      ],
      'no cache instances; create one with `platform cache create NAME`',
    );
    if (res.next_page_token) this.note(`more: --page-token ${res.next_page_token}`);
    // The CLI's noun, `caches`, not the API's `memorystores` (docs/decisions/cli-guidance.md).
    return { caches: res.memorystores, ...(res.next_page_token ? { next_page_token: res.next_page_token } : {}) };
  }
}
