import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliSandbox } from '../helpers/cli.js';
import { waitFor } from './helpers.js';

const cli = cliSandbox({ PLATFORM_VECTOR_READY_DELAY_MS: '0' });
afterAll(() => cli.stop());
beforeAll(async () => {
  const r = await cli.run(['daemon', 'start', '--json']);
  expect(r.exitCode, r.stderr).toBe(0);
});

describe('platform indexes (built CLI against a spawned daemon)', () => {
  it('create, list, get, update, upsert (JSON and NDJSON), query, scroll, delete-points, delete', { timeout: 120_000 }, async () => {
    const created = await cli.run(['indexes', 'create', 'docs', '--dimensions', '3', '--distance', 'Euclidean', '--quantization', 'int8', '--json']);
    expect(created.exitCode, created.stderr).toBe(0);
    expect(created.json).toMatchObject({ name: 'docs', dimensions: 3, distance: 'euclid', quantization: { kind: 'scalar' }, state: 'pending' });
    await waitFor(async () => (await cli.run(['indexes', 'get', 'docs', '--json'])).json?.index?.ready === true, 20_000);

    const human = await cli.run(['indexes', 'list']);
    expect(human.stdout.split('\n')[0]).toMatch(/^NAME\s+DIMENSIONS\s+DISTANCE\s+QUANTIZATION\s+STATE\s+POINTS\s+CREATED$/);
    expect(human.stdout).toMatch(/^docs\s+3\s+euclid\s+scalar\s+ready\s+0\s+/m);
    expect((await cli.run(['indexes', 'get', 'docs'])).stdout).toMatch(/collection\s+p_[a-z0-9]{6}_docs/);

    const json = join(cli.home, 'points.json');
    writeFileSync(json, JSON.stringify({ points: [{ id: 1, vector: [0, 0, 0], payload: { t: 'a' } }, { id: 2, vector: [1, 0, 0], payload: { t: 'b' } }] }));
    const up1 = await cli.run(['indexes', 'upsert', 'docs', '--file', json, '--json']);
    expect(up1.json).toEqual({ index: 'docs', upserted_count: 2 });
    const nd = join(cli.home, 'points.ndjson');
    writeFileSync(nd, [3, 4, 5].map((i) => JSON.stringify({ id: i, vector: [i, 0, 0], payload: { t: i % 2 ? 'odd' : 'even' } })).join('\n') + '\n');
    const up2 = await cli.run(['indexes', 'upsert', 'docs', '--file', nd]);
    expect(up2.stdout).toBe('upserted 3 points into docs');

    const q = await cli.run(['indexes', 'query', 'docs', '--vector', '[0.9, 0, 0]', '--top-k', '2', '--json']);
    expect(q.exitCode, q.stderr).toBe(0);
    expect(q.json.results.map((r: { id: number }) => r.id)).toEqual([2, 1]);
    expect(q.json.results[0].score).toBeCloseTo(0.1, 5);
    const vf = join(cli.home, 'q.json');
    writeFileSync(vf, '[5, 0, 0]');
    const qh = await cli.run(['indexes', 'query', 'docs', '--vector-file', vf, '--filter', '{"must":[{"key":"t","match":{"value":"odd"}}]}']);
    expect(qh.stdout.split('\n')[0]).toMatch(/^ID\s+SCORE\s+PAYLOAD$/);
    expect(qh.stdout.split('\n')[1]).toMatch(/^5\s+0\.000000\s+\{"t":"odd"\}$/);

    const s = await cli.run(['indexes', 'scroll', 'docs', '--limit', '2', '--json']);
    expect(s.json).toMatchObject({ points: [{ id: 1 }, { id: 2 }], next_offset: 3 });
    const s2 = await cli.run(['indexes', 'scroll', 'docs', '--offset', '3']);
    expect(s2.stdout).toMatch(/^3\s+\{"t":"odd"\}$/m);

    expect((await cli.run(['indexes', 'delete-points', 'docs', '--ids', '1,2', '--json', '--yes'])).json).toMatchObject({ ids_requested: 2 });
    const byFilter = await cli.run(['indexes', 'delete-points', 'docs', '--filter', '{"must":[{"key":"t","match":{"value":"even"}}]}', '--yes']);
    expect(byFilter.exitCode).toBe(0);
    expect((await cli.run(['indexes', 'scroll', 'docs', '--json'])).json.points.map((p: { id: number }) => p.id)).toEqual([3, 5]);

    const upd = await cli.run(['indexes', 'update', 'docs', '--replicas', '2', '--payload-on-disk', '--json']);
    expect(upd.json).toMatchObject({ replicas: 2, payload_on_disk: true });
    // Filters keep working with payloads read from storage.
    const q2 = await cli.run(['indexes', 'query', 'docs', '--vector', '[5,0,0]', '--filter', '{"must":[{"key":"t","match":{"value":"odd"}}]}', '--json']);
    expect(q2.json.results.map((r: { id: number }) => r.id)).toEqual([5, 3]);

    expect((await cli.run(['indexes', 'delete', 'docs'])).exitCode).toBe(2);
    const del = await cli.run(['indexes', 'delete', 'docs', '--yes', '--json']);
    expect(del.json).toEqual({ deleted: 'docs' });
    expect((await cli.run(['indexes', 'list'])).stdout).toBe('no indexes');
  });

  it('a SIGKILLed daemon loses nothing: the next command restarts it with every index and point', { timeout: 90_000 }, async () => {
    expect((await cli.run(['indexes', 'create', 'durable', '--dimensions', '4', '--distance', 'dot', '--json'])).exitCode).toBe(0);
    await waitFor(async () => (await cli.run(['indexes', 'get', 'durable', '--json'])).json?.index?.ready === true, 20_000);
    const nd = join(cli.home, 'durable.ndjson');
    // Every point scores differently against the query below (the last component breaks the ties
    // of the first three): among equal scores the order is the engine's, which a restart that
    // rebuilds the graph may change.
    writeFileSync(nd, Array.from({ length: 400 }, (_, i) => JSON.stringify({ id: i, vector: [i % 7, i % 5, i % 3, 1 + i / 1000], payload: { i } })).join('\n'));
    expect((await cli.run(['indexes', 'upsert', 'durable', '--file', nd, '--json'])).json).toEqual({ index: 'durable', upserted_count: 400 });
    const query = ['indexes', 'query', 'durable', '--vector', '[6, 4, 2, 1]', '--top-k', '5', '--json'];
    const before = (await cli.run(query)).json;
    expect(before.results).toHaveLength(5);

    const pid = await cli.killDaemon();

    const after = await cli.run(query);
    expect(after.exitCode, after.stderr).toBe(0);
    // The same points in the same order; scores equal to float32 precision (the graph sums in
    // float32 in its own order, a scan of the points before the graph is back in float64).
    type Hit = { id: number; payload: unknown; score: number };
    const strip = (r: { results: Hit[] }) => r.results.map(({ id, payload }) => ({ id, payload }));
    expect(strip(after.json)).toEqual(strip(before));
    after.json.results.forEach((h: Hit, i: number) => expect(h.score).toBeCloseTo(before.results[i].score, 4));
    const status = (await cli.run(['daemon', 'status', '--json'])).json;
    expect(status.pid).not.toBe(pid);
    const scrolled = (await cli.run(['indexes', 'scroll', 'durable', '--limit', '1000', '--json'])).json;
    expect(scrolled.points.map((p: { id: number }) => p.id)).toEqual(Array.from({ length: 400 }, (_, i) => i));
    expect(scrolled.points[399].payload).toEqual({ i: 399 });
    // The real daemon's vector health answers on the restarted process.
    const health = await fetch(`${status.url}/vector/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: 'ok' });
  });

  it('reports API errors with exit 1 and usage errors with exit 2', async () => {
    const bad = await cli.run(['indexes', 'create', 'Bad_Name', '--json']);
    expect(bad.exitCode).toBe(1);
    expect(bad.json).toMatchObject({ status: 400, error: expect.stringMatching(/invalid name/) });
    const missing = await cli.run(['indexes', 'get', 'nope']);
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toMatch(/Error: index "nope" not found/);
    expect((await cli.run(['indexes', 'query', 'nope'])).exitCode).toBe(2);
    expect((await cli.run(['indexes', 'query', 'nope', '--vector', '[1,'])).stderr).toMatch(/--vector is not valid JSON/);
    expect((await cli.run(['indexes', 'update', 'nope'])).exitCode).toBe(2);
  });
});
