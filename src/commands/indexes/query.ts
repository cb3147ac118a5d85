import { Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { vectorRoutes } from '../../api/vector.js';
import { UsageError } from '../../client/errors.js';
import { indexProject, jsonFlag, nameArg, projectFlag, readText } from '../../cli/indexes.js';

export default class IndexesQuery extends BaseCommand {
  static override summary = 'Similarity search';
  static override examples = [
    `<%= config.bin %> indexes query docs --vector '[0.1, 0.2, 0.3]' --top-k 5`,
    `<%= config.bin %> indexes query docs --vector-file q.json --filter '{"must":[{"key":"lang","match":{"value":"en"}}]}'`,
  ];
  static override args = { name: nameArg };
  static override flags = {
    project: projectFlag,
    vector: Flags.string({ description: 'query vector as a JSON array', exclusive: ['vector-file'] }),
    'vector-file': Flags.string({ description: 'file holding the query vector as a JSON array; - reads stdin' }),
    'top-k': Flags.integer({ description: 'results to return (default 10, max 1000)' }),
    offset: Flags.integer({ description: 'results to skip' }),
    filter: Flags.string({ description: 'Qdrant filter as JSON' }),
    'score-threshold': Flags.string({ description: 'minimum similarity (maximum distance for euclid)' }),
    'with-vector': Flags.boolean({ description: 'include vectors' }),
    payload: Flags.boolean({ description: 'include payloads', default: true, allowNo: true }),
  };

  async run() {
    const { args, flags } = await this.parse(IndexesQuery);
    const raw = flags.vector ?? (flags['vector-file'] ? readText(flags['vector-file']) : undefined);
    if (raw === undefined) throw new UsageError('a query vector is required', 'pass --vector JSON or --vector-file PATH');
    const vector = jsonFlag(flags.vector ? 'vector' : 'vector-file', raw);
    if (!Array.isArray(vector)) throw new UsageError('the query vector must be a JSON array of numbers');
    const threshold = flags['score-threshold'] === undefined ? undefined : Number(flags['score-threshold']);
    if (threshold !== undefined && !Number.isFinite(threshold)) throw new UsageError('--score-threshold must be a number');
    const res = await (await this.client()).call(vectorRoutes.query, {
      params: { projectID: await indexProject(await this.client(), flags.project, flags.context), name: args.name },
      body: {
        vector: vector as number[],
        top_k: flags['top-k'],
        offset: flags.offset,
        ...(flags.filter ? { filter: jsonFlag('filter', flags.filter) } : {}),
        score_threshold: threshold,
        with_vector: flags['with-vector'] || undefined,
        with_payload: flags.payload,
      },
    });
    this.table(
      res.results,
      [
        { header: 'id', get: (r) => r.id },
        { header: 'score', get: (r) => r.score.toFixed(6) },
        ...(flags.payload ? [{ header: 'payload', get: (r: (typeof res.results)[number]) => JSON.stringify(r.payload ?? {}) }] : []),
      ],
      'no results',
    );
    return res;
  }
}
