import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { cast, grant, makeProject } from '../helpers/fixtures.js';
import { deployAgent } from './fixtures.js';

/** Knowledge routes without an embedding endpoint: full-text (BM25) only. */
let d: TestDaemon;
let c: Awaited<ReturnType<typeof cast>>;
let q: string;
const kb = (path = '', query = '') => `/v1/agents/kb${path}?project=${c.project.slug}${query}`;

const CORPUS = [
  { source: 'cats.md', text: 'Cats are small domesticated carnivores. Cats purr when they are content, and a cat sleeps most of the day.' },
  { source: 'dogs.md', text: 'Dogs are loyal companions. A dog may chase cats around the garden.' },
  { source: 'birds.md', text: 'Birds fly south in winter. Many birds sing at dawn.' },
  { source: 'weather.md', text: 'Winter brings snow and short days; in winter the garden sleeps.' },
];

beforeAll(async () => {
  d = await startTestDaemon({ invokeAuthRequired: false });
  c = await cast(d);
  q = `?project=${c.project.slug}`;
  await deployAgent(d, c.member.token, 'kb', c.project.slug);
});
afterAll(async () => d?.close());

describe('knowledge: add, list, search, delete, empty', () => {
  let ids: Record<string, string> = {};

  it('adds documents, chunked, and lists them oldest first', async () => {
    const r = await d.api('POST', kb('/knowledge'), { token: c.member.token, body: { documents: CORPUS } });
    expect(r.status, r.text).toBe(201);
    expect(r.body.agent).toBe('kb');
    expect(r.body.chunks).toBe(4);
    expect(r.body.documents.map((x: any) => [x.source, x.chunks, x.embedded])).toEqual(CORPUS.map((x) => [x.source, 1, false]));
    ids = Object.fromEntries(r.body.documents.map((x: any) => [x.source, x.id]));

    const list = await d.api('GET', kb('/knowledge', '&page_size=3'), { token: c.member.token });
    expect(list.status).toBe(200);
    expect(list.body.documents.map((x: any) => x.source)).toEqual(['cats.md', 'dogs.md', 'birds.md']);
    const next = await d.api('GET', kb('/knowledge', `&page_size=3&page_token=${list.body.next_page_token}`), { token: c.member.token });
    expect(next.body.documents.map((x: any) => x.source)).toEqual(['weather.md']);
    expect(next.body.next_page_token).toBe('');
  });

  it('ranks chunks by BM25 in the expected order, with scores and sources', async () => {
    const r = await d.api('GET', kb('/knowledge', '&query=' + encodeURIComponent('cats purr')), { token: c.member.token });
    expect(r.status, r.text).toBe(200);
    expect(r.body.mode).toBe('bm25');
    // cats.md holds both words (purr is rare), dogs.md one "cats"; the others neither.
    expect(r.body.results.map((h: any) => h.source)).toEqual(['cats.md', 'dogs.md']);
    expect(r.body.results[0].score).toBeGreaterThan(r.body.results[1].score);
    expect(r.body.results[0]).toMatchObject({ document_id: ids['cats.md'], chunk: 0, text: CORPUS[0]!.text });
    expect(r.body.results[0].bm25_score).toBe(r.body.results[0].score);

    // Two documents say winter twice or once, with birds only in one: birds + winter puts birds.md first.
    const w = await d.api('GET', kb('/knowledge', '&query=winter%20birds'), { token: c.member.token });
    expect(w.body.results.map((h: any) => h.source)).toEqual(['birds.md', 'weather.md']);
    // Stemming: "sleeping" finds "sleeps"; FTS syntax in the query is taken as words.
    const s = await d.api('GET', kb('/knowledge', '&query=' + encodeURIComponent('sleeping" OR NEAR(*')), { token: c.member.token });
    expect(s.status, s.text).toBe(200);
    expect(s.body.results.map((h: any) => h.source).sort()).toEqual(['cats.md', 'weather.md']);
    const top1 = await d.api('GET', kb('/knowledge', '&query=cats&top_k=1'), { token: c.member.token });
    expect(top1.body.results).toHaveLength(1);
    const none = await d.api('GET', kb('/knowledge', '&query=zebra'), { token: c.member.token });
    expect(none.body.results).toEqual([]);
  });

  it('splits a long document into chunks at paragraph boundaries', async () => {
    const para = (n: number) => `Paragraph ${n} talks about lighthouses. ` + 'filler words here. '.repeat(20);
    const text = Array.from({ length: 6 }, (_, i) => para(i)).join('\n\n');
    const r = await d.api('POST', kb('/knowledge'), { token: c.member.token, body: { documents: [{ source: 'long.txt', text }] } });
    expect(r.status).toBe(201);
    expect(r.body.documents[0].chunks).toBe(3);
    const hit = await d.api('GET', kb('/knowledge', '&query=lighthouses&top_k=10'), { token: c.member.token });
    expect(hit.body.results.map((h: any) => h.chunk).sort()).toEqual([0, 1, 2]);
    for (const h of hit.body.results) expect(h.text.length).toBeLessThanOrEqual(1000);
    const del = await d.api('DELETE', kb(`/knowledge/${r.body.documents[0].id}`), { token: c.member.token });
    expect(del.status).toBe(200);
    expect(del.body).toMatchObject({ agent: 'kb', deleted: true, document: { source: 'long.txt' } });
    expect((await d.api('GET', kb('/knowledge', '&query=lighthouses'), { token: c.member.token })).body.results).toEqual([]);
    expect((await d.api('DELETE', kb(`/knowledge/${r.body.documents[0].id}`), { token: c.member.token })).status).toBe(404);
  });

  it('refuses bad input with 400 naming the problem', async () => {
    const t = { token: c.member.token };
    const unknown = await d.api('POST', kb('/knowledge'), { ...t, body: { documents: [{ source: 'a', text: 'b' }], extra: 1 } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatch(/extra/);
    expect((await d.api('POST', kb('/knowledge'), { ...t, body: { documents: [] } })).status).toBe(400);
    expect((await d.api('POST', kb('/knowledge'), { ...t, body: { documents: [{ source: 'a', text: '  \n\n ' }] } })).body.error).toMatch(/no text/);
    expect((await d.api('GET', kb('/knowledge', '&query=cats&top_k=0'), t)).status).toBe(400);
    expect((await d.api('GET', kb('/knowledge', '&query=cats&top_k=51'), t)).status).toBe(400);
    expect((await d.api('GET', kb('/knowledge', '&top_k=3'), t)).status).toBe(400);
    expect((await d.api('GET', kb('/knowledge', '&query=cats&page_size=3'), t)).status).toBe(400);
    expect((await d.api('DELETE', kb('/knowledge/not-a-uuid'), t)).status).toBe(400);
    const big = await d.api('POST', kb('/knowledge'), { ...t, body: { documents: [{ source: 'big', text: 'x'.repeat(1024 * 1024 + 10) }] } });
    expect(big.status).toBe(413);
    expect((await d.api('GET', `/v1/agents/Bad_Name/knowledge${q}`, t)).status).toBe(400);
  });

  it('owner rights: the owner and project admins; outsiders, other projects and anonymous callers do not', async () => {
    expect((await d.api('GET', kb('/knowledge', '&query=cats'), { token: c.admin.token })).status).toBe(200);
    // A platform admin without a grant is refused as on every agent route (spec 1 §5: metadata only).
    const pa = await d.api('GET', kb('/knowledge'), { token: c.platformAdmin.token });
    expect(pa.status).toBe((await d.api('GET', `/v1/agents/kb${q}`, { token: c.platformAdmin.token })).status);
    expect(pa.status).not.toBe(200);
    // An admin of another project, naming their own project, finds no agent kb there.
    const other = makeProject(d);
    grant(d, other.id, c.outsider.id, 'admin');
    expect((await d.api('GET', `/v1/agents/kb/knowledge?project=${other.slug}`, { token: c.outsider.token })).status).toBe(404);
    for (const token of [c.outsider.token]) {
      for (const [m, p] of [
        ['GET', kb('/knowledge')],
        ['GET', kb('/knowledge', '&query=cats')],
        ['POST', kb('/knowledge')],
        ['DELETE', kb('/knowledge')],
        ['DELETE', kb(`/knowledge/${ids['cats.md']}`)],
      ] as const) {
        const r = await d.api(m, p, { token, body: m === 'POST' ? { documents: [{ source: 'x', text: 'y' }] } : undefined });
        expect(r.status, `${m} ${p}`).toBe(404);
        expect(r.body).toMatchObject({ error: expect.any(String), request_id: expect.any(String) });
      }
    }
    expect((await d.api('GET', kb('/knowledge'))).status).toBe(401);
    expect((await d.api('GET', `/v1/agents/nope/knowledge${q}`, { token: c.member.token })).status).toBe(404);
    // The admin's own agent is not the member's: 404 like an unknown one.
    await deployAgent(d, c.admin.token, 'admins', c.project.slug);
    expect((await d.api('GET', `/v1/agents/admins/knowledge${q}`, { token: c.member.token })).status).toBe(404);
    expect((await d.api('GET', `/v1/agents/admins/knowledge${q}`, { token: c.admin.token })).status).toBe(200);
  });

  it('empties the knowledge base, and deleting the agent drops its chunks', async () => {
    const r = await d.api('DELETE', kb('/knowledge'), { token: c.member.token });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ agent: 'kb', deleted_documents: 4, deleted_chunks: 4 });
    expect((await d.api('GET', kb('/knowledge'), { token: c.member.token })).body.documents).toEqual([]);
    expect((await d.api('GET', kb('/knowledge', '&query=cats'), { token: c.member.token })).body.results).toEqual([]);

    await d.api('POST', kb('/knowledge'), { token: c.member.token, body: { documents: CORPUS } });
    expect((await d.api('DELETE', `/v1/agents/kb${q}`, { token: c.member.token })).status).toBe(200);
    const left = d.db.prepare("SELECT (SELECT COUNT(*) FROM knowledge_chunks) + (SELECT COUNT(*) FROM knowledge_fts) + (SELECT COUNT(*) FROM knowledge_documents) AS n").get() as { n: number };
    expect(left.n).toBe(0);
  });

  it('appears in the OpenAPI document', async () => {
    const doc = await d.api('GET', '/v1/openapi.json');
    expect(Object.keys(doc.body.paths['/v1/agents/{name}/knowledge'])).toEqual(expect.arrayContaining(['get', 'post', 'delete']));
    expect(doc.body.paths['/v1/agents/{name}/knowledge/{id}'].delete.operationId).toBe('knowledge.delete');
  });
});
