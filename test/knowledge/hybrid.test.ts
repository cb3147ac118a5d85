import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workloadConfigFromEnv } from '../../src/daemon/config.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { cast } from '../helpers/fixtures.js';
import { deployAgent, startEmbeddingStub } from './fixtures.js';

/** Hybrid search: the daemon's embedding endpoint is a stub server this file starts. */
let d: TestDaemon;
let c: Awaited<ReturnType<typeof cast>>;
let stub: Awaited<ReturnType<typeof startEmbeddingStub>>;
const kb = (query = '') => `/v1/agents/hy/knowledge?project=${c.project.slug}${query}`;

const CORPUS = [
  { source: 'garage.md', text: 'Our garage repairs every car brand; bring your car in for an engine check.' },
  { source: 'kennel.md', text: 'The kennel looks after your puppy while you travel.' },
  { source: 'kitchen.md', text: 'A winter soup recipe: leeks, potatoes and stock.' },
];

beforeAll(async () => {
  stub = await startEmbeddingStub();
  d = await startTestDaemon({
    invokeAuthRequired: false,
    workloads: workloadConfigFromEnv({ PLATFORM_EMBED_BASE_URL: stub.url, PLATFORM_EMBED_MODEL: 'stub-embed', PLATFORM_MODEL_API_KEY: 'sk-stub-key' }),
  });
  c = await cast(d);
  await deployAgent(d, c.member.token, 'hy', c.project.slug);
});
afterAll(async () => {
  await d?.close();
  await stub?.close();
});

describe('knowledge: hybrid search with an embedding endpoint', () => {
  it('embeds every chunk when documents are added, with the platform model and key', async () => {
    const r = await d.api('POST', kb(), { token: c.member.token, body: { documents: CORPUS } });
    expect(r.status, r.text).toBe(201);
    expect(r.body.documents.every((x: any) => x.embedded)).toBe(true);
    expect(stub.requests).toHaveLength(1);
    expect(stub.requests[0]).toMatchObject({ model: 'stub-embed', input: CORPUS.map((x) => x.text), auth: 'Bearer sk-stub-key' });
  });

  it('finds by meaning what full text cannot, and fuses both rankings', async () => {
    // No document says "automobile" or "canine": BM25 alone finds nothing, vectors find them.
    const auto = await d.api('GET', kb('&query=automobile&top_k=1'), { token: c.member.token });
    expect(auto.status, auto.text).toBe(200);
    expect(auto.body.mode).toBe('hybrid');
    expect(auto.body.results.map((h: any) => h.source)).toEqual(['garage.md']);
    expect(auto.body.results[0].bm25_score).toBeUndefined();
    expect(auto.body.results[0].vector_score).toBeGreaterThan(0.9);
    const dog = await d.api('GET', kb('&query=canine%20care&top_k=1'), { token: c.member.token });
    expect(dog.body.results[0].source).toBe('kennel.md');
    // "winter" is a word of kitchen.md only (no concept axis): full text carries it; a chunk strong
    // on both sides (soup is a word and a concept) scores above one strong on one side only.
    const soup = await d.api('GET', kb('&query=winter%20soup'), { token: c.member.token });
    expect(soup.body.results[0]).toMatchObject({ source: 'kitchen.md', bm25_score: expect.any(Number), vector_score: expect.any(Number) });
    expect(soup.body.results[0].score).toBeGreaterThan(soup.body.results[1]?.score ?? 0);
  });

  it('sees chunks added and deleted after a search (the in-memory vectors follow writes)', async () => {
    expect((await d.api('GET', kb('&query=bird&top_k=1'), { token: c.member.token })).body.results[0]?.source).not.toBe('aviary.md');
    const add = await d.api('POST', kb(), { token: c.member.token, body: { documents: [{ source: 'aviary.md', text: 'A sparrow sings.' }] } });
    expect(add.status).toBe(201);
    const found = await d.api('GET', kb('&query=bird&top_k=1'), { token: c.member.token });
    expect(found.body.results[0]).toMatchObject({ source: 'aviary.md', vector_score: expect.any(Number) });
    await d.api('DELETE', kb().replace('/knowledge?', `/knowledge/${add.body.documents[0].id}?`), { token: c.member.token });
    const gone = await d.api('GET', kb('&query=bird'), { token: c.member.token });
    expect(gone.body.results.map((h: any) => h.source)).not.toContain('aviary.md');
  });

  it('adds nothing when the endpoint fails, and searches by full text when the query cannot be embedded', async () => {
    const before = (await d.api('GET', kb(), { token: c.member.token })).body.documents.length;
    const r = await d.api('POST', kb(), { token: c.member.token, body: { documents: [{ source: 'bad.md', text: 'this will FAIL to embed' }] } });
    expect(r.status).toBe(502);
    expect(r.body.error).toMatch(/embedding endpoint answered 500: nothing was added/);
    expect((await d.api('GET', kb(), { token: c.member.token })).body.documents.length).toBe(before);

    const s = await d.api('GET', kb('&query=' + encodeURIComponent('car FAIL')), { token: c.member.token });
    expect(s.status).toBe(200);
    expect(s.body.mode).toBe('bm25');
    expect(s.body.note).toMatch(/ranked by full text only/);
    expect(s.body.results.map((h: any) => h.source)).toEqual(['garage.md']);
  });
});
