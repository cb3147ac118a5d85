import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cliSandbox } from '../helpers/cli.js';
import { clustered, ref } from './data.js';
import { waitFor } from './helpers.js';

// Saves are checked every 200 ms here (60 s by default); the planner always uses the graph.
const cli = cliSandbox({ PLATFORM_VECTOR_READY_DELAY_MS: '0', PLATFORM_VECTOR_GRAPH_SAVE_SECONDS: '0.2', PLATFORM_VECTOR_EXACT_MAX_POINTS: '0' });
afterAll(() => cli.stop());

const ndjson = (name: string, points: Array<{ id: number; vector: number[] }>) => {
  const path = join(cli.home, name);
  writeFileSync(path, points.map((p) => JSON.stringify(p)).join('\n'));
  return path;
};

describe('saved graphs across a SIGKILL (spawned daemon)', () => {
  it('the next start loads the last saved graph and reinserts only what was written after it', { timeout: 120_000 }, async () => {
    const N = 2000;
    const data = clustered(N + 60, 16, 31);
    expect((await cli.run(['indexes', 'create', 'crash', '--dimensions', '16', '--json'])).exitCode).toBe(0);
    await waitFor(async () => (await cli.run(['indexes', 'get', 'crash', '--json'])).json?.index?.ready === true, 20_000);
    const all = ndjson('all.ndjson', data.slice(0, N).map((vector, id) => ({ id, vector })));
    expect((await cli.run(['indexes', 'upsert', 'crash', '--file', all, '--json'])).json).toEqual({ index: 'crash', upserted_count: N });

    // The CLI sends two batches of 1,000, each past the save threshold (1,000 changes): the timer
    // saves after one or both, and the last save holds every point.
    const logLines = () => readFileSync(join(cli.home, 'logs', 'daemon.log'), 'utf8').split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
    await waitFor(() => logLines().some((l) => l.msg === 'vector graph saved' && l.points === N), 20_000);
    expect(readdirSync(join(cli.home, 'vector')).some((f) => f.endsWith('.graph'))).toBe(true);

    // Written after the save, too few to trigger another: 40 new points, 10 rewritten, 10 deleted.
    const later = ndjson('later.ndjson', [
      ...data.slice(N, N + 40).map((vector, i) => ({ id: N + i, vector })),
      ...data.slice(N + 40, N + 50).map((vector, i) => ({ id: i, vector })),
    ]);
    expect((await cli.run(['indexes', 'upsert', 'crash', '--file', later, '--json'])).exitCode).toBe(0);
    expect((await cli.run(['indexes', 'delete-points', 'crash', '--ids', Array.from({ length: 10 }, (_, i) => 10 + i).join(','), '--json', '--yes'])).exitCode).toBe(0);
    const live = new Map<number, number[]>(data.slice(0, N + 40).map((v, id) => [id, v]));
    data.slice(N + 40, N + 50).forEach((v, i) => live.set(i, v));
    for (let id = 10; id < 20; id++) live.delete(id);

    await cli.killDaemon();

    for (const q of [data[N + 45]!, data[N + 5]!, data[500]!]) {
      const exact = [...live]
        .map(([id, v]) => ({ id, s: ref.cosine(v, q) }))
        .sort((a, b) => b.s - a.s)
        .slice(0, 5)
        .map((x) => x.id);
      const r = await cli.run(['indexes', 'query', 'crash', '--vector', JSON.stringify(q), '--top-k', '5', '--json']);
      expect(r.exitCode, r.stderr).toBe(0);
      expect(r.json.results.map((x: { id: number }) => x.id)).toEqual(exact);
    }
    const loaded = logLines().filter((l) => l.msg === 'vector graph loaded from its save');
    // The 40 new and 10 rewritten points are reinserted; the 10 rewritten and 10 deleted slots leave.
    expect(loaded).toEqual([expect.objectContaining({ kept: N - 20, reinserting: 50, removed: 20 })]);
  });
});
