import { Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { vectorRoutes } from '../../api/vector.js';
import { INDEX_FIELD_ORDER, indexProject, nameArg, projectFlag } from '../../cli/indexes.js';

export default class IndexesCreate extends BaseCommand {
  static override summary = 'Create a vector index (it starts pending and becomes ready shortly)';
  static override examples = [
    '<%= config.bin %> indexes create docs --dimensions 768',
    '<%= config.bin %> indexes create docs --dimensions 384 --distance dot --quantization int8 --quantile 0.99',
  ];
  static override args = { name: nameArg };
  static override flags = {
    project: projectFlag,
    dimensions: Flags.integer({ description: 'vector width, 1-65536 (default: the hosted embedding width)' }),
    distance: Flags.string({ description: 'cosine (default), dot or euclid; aliases dotproduct, dot_product, euclidean, l2' }),
    quantization: Flags.string({ description: 'none (default), scalar (alias int8) or binary' }),
    quantile: Flags.string({ description: 'scalar quantization quantile, e.g. 0.99' }),
    'always-ram': Flags.boolean({ description: 'keep quantized codes in RAM' }),
    'on-disk': Flags.boolean({ description: 'vectors on disk' }),
    'payload-on-disk': Flags.boolean({ description: 'payloads on disk (filters read them from storage)' }),
    shards: Flags.integer({ description: 'shards (default 1)' }),
    replicas: Flags.integer({ description: 'replicas, 1-8 (default 1)' }),
  };

  async run() {
    const { args, flags } = await this.parse(IndexesCreate);
    const quantization =
      flags.quantization || flags.quantile || flags['always-ram']
        ? { kind: flags.quantization, quantile: flags.quantile, ...(flags['always-ram'] ? { always_ram: true } : {}) }
        : undefined;
    const index = await (await this.client()).call(vectorRoutes.create, {
      params: { projectID: await indexProject(await this.client(), flags.project, flags.context) },
      body: {
        name: args.name,
        dimensions: flags.dimensions,
        distance: flags.distance,
        quantization,
        ...(flags['on-disk'] ? { on_disk: true } : {}),
        ...(flags['payload-on-disk'] ? { payload_on_disk: true } : {}),
        shards: flags.shards,
        replicas: flags.replicas,
      },
    });
    this.fields(index, INDEX_FIELD_ORDER);
    this.note(`index ${index.name} created (state ${index.state}); data operations work once ready is true`);
    return index;
  }
}
