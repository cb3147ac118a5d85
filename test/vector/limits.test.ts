import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliSandbox } from '../helpers/cli.js';
import type { TestDaemon } from '../helpers/daemon.js';
import { cast } from '../helpers/fixtures.js';
import { idx, readyIndex, startVectorDaemon, waitFor } from './helpers.js';

/**
 * Spec 3 §8 names three vector limits as settings: MAX_POINTS_PER_REQUEST (1000), MAX_BODY_BYTES
 * (32 MiB) and MAX_TOP_K (1000). The daemon reads them under those names; the index API and the
 * Qdrant-compatible direct routes both follow them.
 */
describe('vector limit settings on a spawned daemon (CLI)', () => {
  const cli = cliSandbox({ PLATFORM_VECTOR_READY_DELAY_MS: '0', MAX_POINTS_PER_REQUEST: '5', MAX_TOP_K: '3', MAX_BODY_BYTES: '4096' });
  afterAll(() => cli.stop());

  it('upsert, top_k and body size follow MAX_POINTS_PER_REQUEST, MAX_TOP_K and MAX_BODY_BYTES', { timeout: 60_000 }, async () => {
    expect((await cli.run(['indexes', 'create', 'small', '--dimensions', '2', '--json'])).exitCode).toBe(0);
    await waitFor(async () => (await cli.run(['indexes', 'get', 'small', '--json'])).json?.index?.ready === true, 20_000);
    const file = join(cli.home, 'seven.ndjson');
    writeFileSync(file, Array.from({ length: 7 }, (_, i) => JSON.stringify({ id: i, vector: [i, 1] })).join('\n'));

    const refused = await cli.run(['indexes', 'upsert', 'small', '--file', file, '--json']);
    expect(refused.exitCode).toBe(1);
    expect(refused.json).toMatchObject({ status: 400, error: expect.stringMatching(/at most 5 points per upsert/) });
    const batched = await cli.run(['indexes', 'upsert', 'small', '--file', file, '--batch-size', '5', '--json']);
    expect(batched.json).toEqual({ index: 'small', upserted_count: 7 });

    const wide = await cli.run(['indexes', 'query', 'small', '--vector', '[1,1]', '--top-k', '4', '--json']);
    expect(wide.exitCode).toBe(1);
    expect(wide.json.error).toMatch(/top_k must be at most 3/);
    expect((await cli.run(['indexes', 'query', 'small', '--vector', '[1,1]', '--top-k', '3', '--json'])).json.results).toHaveLength(3);

    const big = join(cli.home, 'big.ndjson');
    writeFileSync(big, JSON.stringify({ id: 9, vector: [1, 1], payload: { text: 'x'.repeat(5000) } }));
    const tooBig = await cli.run(['indexes', 'upsert', 'small', '--file', big, '--json']);
    expect(tooBig.exitCode).toBe(1);
    expect(tooBig.json).toMatchObject({ status: 413, error: expect.stringMatching(/request body exceeds 4096 bytes/) });
  });
});

describe('vector limit settings on the direct (Qdrant-compatible) routes', () => {
  let d: TestDaemon;
  let token: string;
  let col: string;
  let member: { token: string; project: string };
  beforeAll(async () => {
    d = await startVectorDaemon({ limits: { pointsPerUpsert: 5, topKMax: 3, bodyBytes: 4096 } });
    const c = await cast(d);
    member = { token: c.member.token, project: c.project.id };
    await readyIndex(d, c.member.token, c.project.id, { name: 'small', dimensions: 2 });
    ({ token, collections: [col] } = (await d.api('GET', `/v1/projects/${c.project.id}/vectordb/credentials`, { token: c.admin.token })).body);
  });
  afterAll(() => d?.close());
  const direct = (path: string, body: unknown, method = 'POST') => d.api(method, `/vectordb/collections/${col}${path}`, { body, headers: { 'api-key': token } });

  it('refuses more points, a wider search and a larger body than the settings allow', async () => {
    const points = (n: number) => Array.from({ length: n }, (_, i) => ({ id: i, vector: [i, 1] }));
    expect((await direct('/points', { points: points(6) }, 'PUT')).body.error).toMatch(/at most 5 points per upsert/);
    expect((await direct('/points', { points: points(5) }, 'PUT')).status).toBe(200);
    expect((await direct('/points/search', { vector: [1, 1], limit: 4 })).body.error).toMatch(/top_k must be at most 3/);
    expect((await direct('/points/search', { vector: [1, 1], limit: 3 })).body.result).toHaveLength(3);
    const big = await direct('/points', { points: [{ id: 9, vector: [1, 1], payload: { text: 'x'.repeat(5000) } }] }, 'PUT');
    expect(big.status).toBe(413);
  });

  it('a streamed upsert body (no content-length, small chunks) is taken whole', async () => {
    // Chunked transfer: the daemon reads the chunks as they come (copied, being small) and the parse thread joins them.
    const streamed = (parts: string[]) =>
      fetch(d.url + `${idx(member.project, 'small')}:upsert`, {
        method: 'POST',
        headers: { authorization: `Bearer ${member.token}`, 'content-type': 'application/json' },
        body: new ReadableStream({
          start(controller) {
            for (const p of parts) controller.enqueue(new TextEncoder().encode(p));
            controller.close();
          },
        }),
        duplex: 'half',
      } as RequestInit);
    const under = await streamed(['{"points": [{"id": 21, ', '"vector": [3, 4], ', '"payload": {"text": "', 'y'.repeat(1000), '"}}]}']);
    expect(under.status, await under.clone().text()).toBe(200);
    const got = await d.api('POST', `${idx(member.project, 'small')}:query`, { token: member.token, body: { vector: [3, 4], top_k: 1 } });
    expect(got.body.results[0]).toMatchObject({ id: 21, payload: { text: 'y'.repeat(1000) } });
  });
});
