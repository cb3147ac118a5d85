import { BaseCommand } from '../../cli/base-command.js';
import { readContexts } from '../../client/contexts.js';

export default class ContextList extends BaseCommand {
  static override summary = 'List contexts (local daemon and remote platforms)';
  static override examples = ['<%= config.bin %> context list', '<%= config.bin %> context list --json'];

  async run() {
    const data = readContexts();
    // The CA itself stays in contexts.json; the list says only that one is trusted.
    const contexts = data.contexts.map(({ ca_cert, ...c }) => ({ ...c, ...(ca_cert ? { custom_ca: true } : {}), current: c.name === data.current }));
    this.table(contexts, [
      { header: 'current', get: (c) => (c.current ? '*' : '') },
      { header: 'name', get: (c) => c.name },
      { header: 'kind', get: (c) => c.kind },
      { header: 'url', get: (c) => (c.kind === 'local' ? 'local daemon' : c.url) },
      { header: 'project', get: (c) => c.project },
      { header: 'tls', get: (c) => (c.custom_ca ? 'own CA' : '') },
    ]);
    return { current: data.current, contexts };
  }
}
