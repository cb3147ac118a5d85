import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startedSandbox } from './small-things-helpers.js';

/**
 * Issue 25 §3, "small things users trip on" (messaging, vector, quota), through the built CLI
 * against the daemon it starts. New topics stay pending for a second here so `--wait` has
 * something to wait for; indexes are ready at once.
 */
const sandbox = startedSandbox({ PLATFORM_PUBSUB_CONVERGE_MS: '1000', PLATFORM_VECTOR_READY_DELAY_MS: '0' });
const { cli, api } = sandbox;
const SLOW = 120_000;
afterAll(() => cli.stop(), 60_000);
beforeAll(() => sandbox.start(), SLOW);

describe('topics create --wait', () => {
  it('without --wait the topic is pending; with --wait it is ready and takes a publish at once', async () => {
    const [quick, waited] = await Promise.all([
      cli.run(['topics', 'create', 'quick', '--json']),
      cli.run(['topics', 'create', 'waited', '--wait']),
    ]);
    expect(quick.exitCode, quick.stderr).toBe(0);
    expect(quick.json).toMatchObject({ name: 'quick', state: 'pending', ready: false });
    expect(waited.exitCode, waited.stderr).toBe(0);
    expect(waited.stdout).toMatch(/^state\s+ready$/m);
    expect(waited.stderr).toContain('topic waited created and ready');
    const published = await cli.run(['publish', 'waited', '--text', 'hello', '--json']);
    expect(published.exitCode, published.stderr).toBe(0);
    expect(published.json.published).toBe(1);
  }, SLOW);
});

describe('pull without --ack', () => {
  it('says on stderr that the messages are leased, when they come back and how to acknowledge them', async () => {
    const sub = await cli.run(['subscriptions', 'create', 'waited', 'reader', '--ack-deadline', '30']);
    expect(sub.exitCode, sub.stderr).toBe(0);
    const subPath = `/v1/projects/${(await api('GET', '/v1/projects/default')).body.id}/topics/waited/subscriptions/reader`;
    for (let i = 0; i < 100 && (await api('GET', subPath)).body?.ready !== true; i++) await new Promise((r) => setTimeout(r, 50));
    const two = await cli.run(['publish', 'waited', '--file', '-'], { input: '{"text":"one"}\n{"text":"two"}\n' });
    expect(two.exitCode, two.stderr).toBe(0);
    const pulled = await cli.run(['pull', 'waited/reader', '--max', '1', '--wait', '5']);
    expect(pulled.exitCode, pulled.stderr).toBe(0);
    expect(pulled.stdout).toMatch(/one/);
    expect(pulled.stderr).toContain('this message is leased, not removed: unless acknowledged within 30 s it is delivered again');
    expect(pulled.stderr).toContain('`platform ack waited/reader ACK_ID...`');
    expect(pulled.stderr).toContain('or pull with --ack');
    // Under --json stdout carries only the result and the note, meant for people, is left out.
    const asJson = await cli.run(['pull', 'reader', '--topic', 'waited', '--max', '1', '--wait', '5', '--json']);
    expect(asJson.exitCode, asJson.stderr).toBe(0);
    expect(asJson.json.messages).toHaveLength(1);
    expect(asJson.stderr).toBe('');
    expect((await cli.run(['publish', 'waited', '--text', 'three'])).exitCode).toBe(0);
    const acked = await cli.run(['pull', 'waited/reader', '--wait', '5', '--ack']);
    expect(acked.stderr).toBe('acknowledged 1');
    const ackID = pulled.stdout.split('\n')[1]!.trim().split(/\s+/).pop()!;
    expect((await cli.run(['ack', 'waited/reader', ackID])).stdout).toBe('acknowledged 1 of 1');
  }, SLOW);
});

describe('indexes list: live point counts', () => {
  it('shows the points just upserted (the API view lags by design), in the table, --json and get', async () => {
    expect((await cli.run(['indexes', 'create', 'docs', '--dimensions', '2'])).exitCode).toBe(0);
    const file = join(cli.home, 'points.ndjson');
    writeFileSync(file, [1, 2, 3].map((i) => JSON.stringify({ id: i, vector: [i, 1], payload: { odd: i % 2 === 1 } })).join('\n') + '\n');
    const up = await cli.run(['indexes', 'upsert', 'docs', '--file', file]);
    expect(up.exitCode, up.stderr).toBe(0);
    const [human, json, get] = await Promise.all([cli.run(['indexes', 'list']), cli.run(['indexes', 'list', '--json']), cli.run(['indexes', 'get', 'docs', '--json'])]);
    expect(human.stdout).toMatch(/^docs\s+2\s+cosine\s+none\s+ready\s+3\s+/m);
    expect(json.json.indexes[0]).toMatchObject({ name: 'docs', points_count: 3, vectors_count: 3 });
    expect(get.json.index).toMatchObject({ points_count: 3 });
    const projectID = (await api('GET', '/v1/projects/default')).body.id as string;
    // The API's own figure is refreshed every five minutes (spec 3 §2.1): still 0 here.
    expect((await api('GET', `/v1/projects/${projectID}/indexes/docs`)).body.index.points_count).toBe(0);
    const base = `/v1/projects/${projectID}/indexes/docs:count`;
    const [all, odd, unknownField] = await Promise.all([
      api('POST', base, {}),
      api('POST', base, { filter: { must: [{ key: 'odd', match: { value: true } }] } }),
      api('POST', base, { exact: true }),
    ]);
    expect(all).toEqual({ status: 200, body: { index: 'docs', count: 3 } });
    expect(odd.body).toEqual({ index: 'docs', count: 2 });
    expect(unknownField.status).toBe(400);
    expect(unknownField.body.error).toMatch(/exact/);
  }, SLOW);
});

describe('quota counts running instances', () => {
  it('a running cache server fills the instances quota, shown per area', async () => {
    const before = await cli.run(['quota', '--json']);
    const instances = (r: typeof before) => r.json.quotas.find((q: { resource: string }) => q.resource === 'instances');
    expect(instances(before)).toMatchObject({ used: 0, by_source: { agents: 0, cache: 0, mcp: 0, serverless: 0 } });
    const created = await cli.run(['cache', 'create', 'sessions', '--wait', '--json']);
    expect(created.exitCode, created.stderr).toBe(0);
    const [after, human] = await Promise.all([cli.run(['quota', '--json']), cli.run(['quota'])]);
    expect(instances(after)).toMatchObject({ used: 1, limit: 50, by_source: { cache: 1, agents: 0 } });
    expect(human.stdout).toMatch(/^instances\s+1\s+50\s+count\s+agents 0, cache 1, mcp 0, serverless 0$/m);
    // A small cache server (a 256Mi container) holds its memory as request and limit, and no CPU
    // (its size class names memory only); no proxy stands in front of it.
    const row = (resource: string) => after.json.quotas.find((q: { resource: string }) => q.resource === resource);
    expect(row('memory_requests')).toMatchObject({ used: 256, by_source: { cache: 256, agents: 0 } });
    expect(row('memory_limits')).toMatchObject({ used: 256, by_source: { cache: 256, agents: 0 } });
    expect(row('cpu_requests')).toMatchObject({ used: 0, by_source: { cache: 0 } });
    expect(row('cpu_limits')).toMatchObject({ used: 0, by_source: { cache: 0 } });
  }, SLOW);
});
