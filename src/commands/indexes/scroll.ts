import { Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { vectorRoutes } from '../../api/vector.js';
import { indexProject, nameArg, projectFlag } from '../../cli/indexes.js';

export default class IndexesScroll extends BaseCommand {
  static override summary = 'Browse points in id order (payloads, never vectors)';
  static override examples = ['<%= config.bin %> indexes scroll docs --limit 100', '<%= config.bin %> indexes scroll docs --offset 1000 --json'];
  static override args = { name: nameArg };
  static override flags = {
    project: projectFlag,
    limit: Flags.integer({ description: 'points per page (default 50, max 1000)' }),
    offset: Flags.string({ description: 'first id of the page (the previous next_offset)' }),
  };

  async run() {
    const { args, flags } = await this.parse(IndexesScroll);
    // Offsets are unsigned integers or UUIDs; a digits-only value is sent as a number.
    const offset = flags.offset === undefined ? undefined : /^\d+$/.test(flags.offset) ? Number(flags.offset) : flags.offset;
    const res = await (await this.client()).call(vectorRoutes.scroll, {
      params: { projectID: await indexProject(await this.client(), flags.project, flags.context), name: args.name },
      body: { limit: flags.limit, offset },
    });
    this.table(
      res.points,
      [
        { header: 'id', get: (p) => p.id },
        { header: 'payload', get: (p) => JSON.stringify(p.payload ?? {}) },
      ],
      'no points',
    );
    if (res.next_offset !== undefined) this.note(`more: --offset ${res.next_offset}`);
    return res;
  }
}
