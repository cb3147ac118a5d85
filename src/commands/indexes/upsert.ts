import { Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { VECTOR_LIMITS, vectorRoutes } from '../../api/vector.js';
import { indexProject, nameArg, parsePointsFile, projectFlag, readText } from '../../cli/indexes.js';

export default class IndexesUpsert extends BaseCommand {
  static override summary = 'Write points from a JSON or NDJSON file';
  static override description =
    'The file holds a JSON array of points, an object with a points array, or one point per line (NDJSON). Each point has vector, optional id (unsigned integer or UUID) and optional payload. Points are sent in batches of 1000, the default MAX_POINTS_PER_REQUEST (use --batch-size for a server set lower); each batch is all or nothing.';
  static override examples = [
    '<%= config.bin %> indexes upsert docs --file points.ndjson',
    'cat points.json | <%= config.bin %> indexes upsert docs --file -',
    '<%= config.bin %> indexes upsert docs --file points.ndjson --batch-size 200',
  ];
  static override args = { name: nameArg };
  static override flags = {
    project: projectFlag,
    file: Flags.string({ description: 'points file (JSON or NDJSON); - reads stdin', required: true }),
    'batch-size': Flags.integer({ description: 'points per request (default 1000)', min: 1, default: VECTOR_LIMITS.pointsPerUpsert }),
  };

  async run() {
    const { args, flags } = await this.parse(IndexesUpsert);
    const points = parsePointsFile(readText(flags.file));
    const client = await this.client();
    const params = { projectID: await indexProject(await this.client(), flags.project, flags.context), name: args.name };
    let upserted = 0;
    const size = flags['batch-size'];
    for (let i = 0; i < points.length; i += size) {
      const batch = points.slice(i, i + size);
      const res = await client.call(vectorRoutes.upsert, { params, body: { points: batch } });
      upserted += res.upserted_count;
      if (points.length > size) this.note(`upserted ${upserted}/${points.length}`);
    }
    this.print(`upserted ${upserted} point${upserted === 1 ? '' : 's'} into ${args.name}`);
    return { index: args.name, upserted_count: upserted };
  }
}
