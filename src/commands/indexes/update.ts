import { Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { vectorRoutes } from '../../api/vector.js';
import { UsageError } from '../../client/errors.js';
import { INDEX_FIELD_ORDER, indexProject, nameArg, projectFlag } from '../../cli/indexes.js';

export default class IndexesUpdate extends BaseCommand {
  static override summary = 'Change replicas or payload storage of an index (admin)';
  static override description = 'Only replicas and payload_on_disk are editable; the other settings are fixed at creation.';
  static override examples = ['<%= config.bin %> indexes update docs --replicas 3', '<%= config.bin %> indexes update docs --no-payload-on-disk'];
  static override args = { name: nameArg };
  static override flags = {
    project: projectFlag,
    replicas: Flags.integer({ description: 'replicas, 1-8' }),
    'payload-on-disk': Flags.boolean({ description: 'keep payloads on disk', allowNo: true }),
  };

  async run() {
    const { args, flags } = await this.parse(IndexesUpdate);
    if (flags.replicas === undefined && flags['payload-on-disk'] === undefined) {
      throw new UsageError('nothing to change', 'pass --replicas N or --[no-]payload-on-disk');
    }
    const index = await (await this.client()).call(vectorRoutes.patch, {
      params: { projectID: await indexProject(await this.client(), flags.project, flags.context), name: args.name },
      body: { replicas: flags.replicas, payload_on_disk: flags['payload-on-disk'] },
    });
    this.fields(index, INDEX_FIELD_ORDER);
    return index;
  }
}
