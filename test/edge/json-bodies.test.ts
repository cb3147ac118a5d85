import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiResponse, TestDaemon } from '../helpers/daemon.js';
import { cast } from '../helpers/fixtures.js';
import { idx, readyIndex, startVectorDaemon } from '../vector/helpers.js';
import { MAX_JSON_DEPTH } from '../../src/daemon/http/body.js';

/**
 * Bodies that are valid JSON but hostile (issue 16 §3), on every JSON route family: nesting
 * thousands deep, numbers that overflow float32, names with control characters, loose base64.
 * Every one is a 400 in the envelope, never a 500 and never stored.
 */
let d: TestDaemon;
let c: Awaited<ReturnType<typeof cast>>;
let p: string;
let col: string;
let direct: string;

/** JSON text nested `depth` levels: objects `{"a":...}` or arrays `[[...]]`. */
const deepText = (depth: number, kind: 'object' | 'array' = 'object') =>
  kind === 'object' ? '{"a":'.repeat(depth) + '1' + '}'.repeat(depth) : '['.repeat(depth) + ']'.repeat(depth);
/** A body with `inner` (raw JSON text) placed at `field`. */
const withRaw = (obj: Record<string, unknown>, field: string, inner: string) => {
  const marker = '"__RAW__"';
  const text = JSON.stringify({ ...obj, [field]: '__RAW__' });
  return text.replace(marker, inner);
};

const expect400 = (r: ApiResponse, message?: RegExp) => {
  expect(r.status, r.text.slice(0, 300)).toBe(400);
  expect(r.body.request_id).toBe(r.headers.get('x-request-id'));
  if (message) expect(r.body.error).toMatch(message);
};

beforeAll(async () => {
  d = await startVectorDaemon();
  c = await cast(d);
  p = c.project.id;
  await readyIndex(d, c.member.token, p, { name: 'edge', dimensions: 3, distance: 'dot' });
  const cred = await d.api('GET', `/v1/projects/${p}/vectordb/credentials`, { token: c.admin.token });
  direct = cred.body.token;
  col = cred.body.collections[0];
  expect((await d.api('POST', `/v1/projects/${p}/topics`, { token: c.admin.token, body: { name: 't' } })).status).toBeLessThan(300);
  expect((await d.api('POST', `/v1/projects/${p}/secrets`, { token: c.admin.token, body: { name: 'db', value: 's3cret' } })).status).toBe(201);
});
afterAll(() => d.close());

const raw = (method: string, path: string, text: string, token = c.admin.token, headers: Record<string, string> = {}) =>
  d.api(method, path, { token, raw: text, headers: { 'content-type': 'application/json', ...headers } });
const qdrant = (method: string, path: string, text: string) => d.api(method, `/vectordb/collections/${col}${path}`, { raw: text, headers: { 'api-key': direct, 'content-type': 'application/json' } });

describe('JSON nested deeper than the limit is 400 on every route family', () => {
  const families: Array<[string, () => Promise<ApiResponse>]> = [
    ['accounts: create project', () => raw('POST', '/v1/projects', withRaw({ slug: 'deep' }, 'name', deepText(3000, 'array')))],
    ['accounts: create org', () => raw('POST', '/v1/orgs', withRaw({ slug: 'deep' }, 'name', deepText(3000, 'array')), c.platformAdmin.token)],
    ['accounts: service account', () => raw('POST', `/v1/projects/${p}/service-accounts`, withRaw({ name: 'sa' }, 'display_name', deepText(3000, 'array')))],
    ['accounts: login', () => raw('POST', '/v1/auth/login', deepText(4000, 'array'), '')],
    ['vector: create index', () => raw('POST', idx(p), withRaw({ name: 'x' }, 'quantization', deepText(5000)))],
    ['vector: upsert payload', () => raw('POST', `${idx(p, 'edge')}:upsert`, `{"points":[{"vector":[1,0,0],"payload":${deepText(5000)}}]}`)],
    ['vector: query filter', () => raw('POST', `${idx(p, 'edge')}:query`, `{"vector":[1,0,0],"filter":${deepText(5000)}}`)],
    ['vector: delete filter', () => raw('POST', `${idx(p, 'edge')}:delete-points`, `{"filter":${deepText(5000)}}`)],
    ['qdrant: upsert payload', () => qdrant('PUT', '/points', `{"points":[{"id":1,"vector":[1,0,0],"payload":${deepText(5000)}}]}`)],
    ['qdrant: search filter', () => qdrant('POST', '/points/search', `{"vector":[1,0,0],"limit":1,"filter":${deepText(5000)}}`)],
    ['qdrant: query', () => qdrant('POST', '/points/query', `{"query":${deepText(5000, 'array')}}`)],
    ['qdrant: scroll filter', () => qdrant('POST', '/points/scroll', `{"filter":${deepText(5000)}}`)],
    ['messaging: publish attributes', () => raw('POST', `/v1/projects/${p}/topics/t:publish`, `{"messages":[{"attributes":${deepText(5000)}}]}`)],
    ['messaging: create topic', () => raw('POST', `/v1/projects/${p}/topics`, withRaw({ name: 'deep' }, 'display_name', deepText(5000)))],
    ['secrets: write', () => raw('POST', `/v1/projects/${p}/secrets`, withRaw({ name: 'deep' }, 'value', deepText(5000)))],
    ['secrets: issue token', () => raw('POST', `/v1/projects/${p}/secrets/db:issue-token`, deepText(4000, 'array'))],
    ['agents: set env', () => raw('PATCH', `/v1/agents/none/env?project=${p}`, withRaw({}, 'env', deepText(3000, 'array')))],
    ['agents: config', () => raw('PATCH', `/v1/agents/none/config?project=${p}`, deepText(4000, 'array'))],
    ['cache: create', () => raw('POST', `/v1/projects/${p}/memorystores`, withRaw({ name: 'deep' }, 'persistence', deepText(5000, 'array')))],
  ];
  it.each(families)('%s', async (_name, call) => {
    expect400(await call(), new RegExp(`nested more than ${MAX_JSON_DEPTH} levels`));
  });

  it('bodies up to the limit still work (a payload 60 deep round-trips)', async () => {
    const r = await raw('POST', `${idx(p, 'edge')}:upsert`, `{"points":[{"id":7,"vector":[1,0,0],"payload":${deepText(60)}}]}`);
    expect(r.status, r.text).toBe(200);
    const q = await raw('POST', `${idx(p, 'edge')}:query`, '{"vector":[1,0,0],"top_k":10}');
    expect(q.body.results.find((x: any) => x.id === 7).payload).toEqual(JSON.parse(deepText(60)));
    // Brackets inside strings are not nesting.
    expect((await raw('POST', `/v1/projects/${p}/secrets`, JSON.stringify({ name: 'brackets', value: '['.repeat(10_000) }))).status).toBe(201);
  });

  it('a reveal with a deep body stays lenient (reveals the current version), never 500', async () => {
    const r = await raw('POST', `/v1/projects/${p}/secrets/db:reveal`, deepText(4000, 'array'));
    expect(r.status).toBe(200);
    expect(r.body.value).toBe('s3cret');
  });
});

describe('vectors that overflow float32 or would score non-finite are 400', () => {
  const big = (x: number) => [x, 0, 0];
  const cases: Array<[string, number[]]> = [
    ['a component over float32 (1e39)', big(1e39)],
    ['components of 1e308', [1e308, 1e308, 1e308]],
    ['a norm whose scores overflow (1e20 components)', [1e20, 1e20, 1e20]],
  ];
  it.each(cases)('native upsert and query: %s', async (_n, v) => {
    expect400(await d.api('POST', `${idx(p, 'edge')}:upsert`, { token: c.member.token, body: { points: [{ id: 99, vector: v }] } }), /float32|norm/);
    expect400(await d.api('POST', `${idx(p, 'edge')}:query`, { token: c.member.token, body: { vector: v } }), /float32|norm/);
  });
  it.each(cases)('Qdrant upsert, batch, search and query: %s', async (_n, v) => {
    expect400(await qdrant('PUT', '/points', JSON.stringify({ points: [{ id: 99, vector: v }] })), /float32|norm/);
    expect400(await qdrant('PUT', '/points', JSON.stringify({ batch: { ids: [99], vectors: [v] } })), /float32|norm/);
    expect400(await qdrant('POST', '/points/search', JSON.stringify({ vector: v, limit: 1 })), /float32|norm/);
    expect400(await qdrant('POST', '/points/query', JSON.stringify({ query: v })), /float32|norm/);
  });
  it('1e400 in JSON (Infinity once parsed) is refused the same way; nothing was stored', async () => {
    expect400(await raw('POST', `${idx(p, 'edge')}:upsert`, '{"points":[{"id":98,"vector":[1e400,0,0]}]}'));
    const s = await raw('POST', `${idx(p, 'edge')}:query`, '{"vector":[1,1,1],"top_k":100}');
    expect(s.status).toBe(200);
    expect(s.body.results.map((x: any) => x.id)).not.toContain(99);
    expect(s.body.results.every((x: any) => Number.isFinite(x.score))).toBe(true);
  });
  it('large but safe vectors are stored and score finitely', async () => {
    expect((await d.api('POST', `${idx(p, 'edge')}:upsert`, { token: c.member.token, body: { points: [{ id: 50, vector: [1e15, -1e15, 3e14] }] } })).status).toBe(200);
    const s = await d.api('POST', `${idx(p, 'edge')}:query`, { token: c.member.token, body: { vector: [1e15, 1e15, 1e15], top_k: 100 } });
    expect(s.body.results.every((x: any) => Number.isFinite(x.score))).toBe(true);
  });
});

describe('numbers out of range in other families are 400, never 500', () => {
  it.each([
    ['messaging: ack deadline 1e308', () => d.api('POST', `/v1/projects/${p}/topics/t/subscriptions`, { token: c.admin.token, body: { name: 'big', ack_deadline_seconds: 1e308 } })],
    ['messaging: max_ack_pending 1e400', () => raw('POST', `/v1/projects/${p}/topics/t/subscriptions`, '{"name":"big2","max_ack_pending":1e400}')],
    ['secrets: token ttl 1e308', () => d.api('POST', `/v1/projects/${p}/secrets/db:issue-token`, { token: c.admin.token, body: { ttl_seconds: 1e308 } })],
    ['vector: dimensions 1e308', () => d.api('POST', idx(p), { token: c.admin.token, body: { name: 'huge', dimensions: 1e308 } })],
    ['accounts: key expiry 1e308 days', () => d.api('POST', '/v1/users/me/keys', { token: c.admin.token, body: { display_name: 'k', expires_in_days: 1e308 } })],
    ['qdrant: search limit 1e308', () => qdrant('POST', '/points/search', JSON.stringify({ vector: [1, 0, 0], limit: 1e308 }))],
  ])('%s', async (_n, call) => {
    const r = await call();
    expect(r.status, r.text.slice(0, 300)).toBeGreaterThanOrEqual(400);
    expect(r.status, r.text.slice(0, 300)).toBeLessThan(500);
  });
});

describe('names and display names refuse control characters and lone surrogates', () => {
  const bad = ['a\u0000b', 'line\r\nbreak', 'tab\there', 'esc\u001b[31m', 'del\u007f', 'c1\u0085', 'lone\ud800', 'lone\udc00x'];
  const routes: Array<[string, (v: string) => Promise<ApiResponse>]> = [
    ['project name', async (v) => d.api('POST', '/v1/projects', { token: await d.adminToken(), body: { slug: 'named', name: v } })],
    ['org name', (v) => d.api('POST', '/v1/orgs', { token: c.platformAdmin.token, body: { slug: 'named', name: v } })],
    ['service account display name', (v) => d.api('POST', `/v1/projects/${p}/service-accounts`, { token: c.admin.token, body: { name: 'named', display_name: v } })],
    ['service account description', (v) => d.api('POST', `/v1/projects/${p}/service-accounts`, { token: c.admin.token, body: { name: 'named', description: v } })],
    ['API key display name', (v) => d.api('POST', '/v1/users/me/keys', { token: c.admin.token, body: { display_name: v } })],
    ['topic display name', (v) => d.api('POST', `/v1/projects/${p}/topics`, { token: c.admin.token, body: { name: 'named', display_name: v } })],
    ['topic patch display name', (v) => d.api('PATCH', `/v1/projects/${p}/topics/t`, { token: c.admin.token, body: { display_name: v } })],
    ['subscription display name', (v) => d.api('POST', `/v1/projects/${p}/topics/t/subscriptions`, { token: c.admin.token, body: { name: 'named', display_name: v } })],
    ['message key', (v) => d.api('POST', `/v1/projects/${p}/topics/t:publish`, { token: c.admin.token, body: { messages: [{ text: 'x', key: v }] } })],
    ['attribute name', (v) => d.api('POST', `/v1/projects/${p}/topics/t:publish`, { token: c.admin.token, body: { messages: [{ text: 'x', attributes: { [v]: '1' } }] } })],
    ['member e-mail', (v) => d.api('POST', `/v1/projects/${p}/members`, { token: c.admin.token, body: { email: `${v}@example.test` } })],
    ['user e-mail', async (v) => d.api('POST', '/v1/users', { token: await d.adminToken(), body: { email: `${v}@example.test` } })],
    ['index name', (v) => d.api('POST', idx(p), { token: c.admin.token, body: { name: v } })],
    ['secret name', (v) => d.api('POST', `/v1/projects/${p}/secrets`, { token: c.admin.token, body: { name: v, value: 'x' } })],
    ['memorystore name', (v) => d.api('POST', `/v1/projects/${p}/memorystores`, { token: c.admin.token, body: { name: v } })],
  ];
  it.each(routes)('%s', async (_n, call) => {
    for (const v of bad) expect400(await call(v));
  });
  it('printable names, emoji (surrogate pairs) included, are accepted', async () => {
    expect((await d.api('POST', '/v1/projects', { token: await d.adminToken(), body: { slug: 'emoji', name: 'Café ☕ 🚀 – 東京' } })).status).toBe(201);
    const r = await d.api('POST', `/v1/projects/${p}/topics/t:publish`, { token: c.admin.token, body: { messages: [{ text: 'x', key: 'clé-🚀', attributes: { 'Mixed Case 🚀': 'v' } }] } });
    expect(r.status, r.text).toBe(200);
  });
});

describe('publish data is strict base64', () => {
  it.each(['NaN', '/etc/passwd', 'YQ', 'YQ=', 'YR==', 'Y Q==', 'YQ==\n', '-_8=', 'YQ==YQ=='])('refuses %j', async (data) => {
    expect400(await d.api('POST', `/v1/projects/${p}/topics/t:publish`, { token: c.member.token, body: { messages: [{ data }] } }), /data is not valid base64/);
  });
  it.each(['', 'YQ==', 'YWI=', 'YWJj', Buffer.from([0, 255, 254]).toString('base64')])('accepts %j', async (data) => {
    expect((await d.api('POST', `/v1/projects/${p}/topics/t:publish`, { token: c.member.token, body: { messages: [{ data }] } })).status).toBe(200);
  });
});

describe('a reveal records its reason even when another field is malformed', () => {
  it.each([
    [{ version: 'abc', reason: 'incident 42' }, 'incident 42'],
    [{ version: -3, reason: 'ticket 7' }, 'ticket 7'],
    [{ version: 1, reason: 'plain' }, 'plain'],
  ])('%j', async (body, reason) => {
    const r = await d.api('POST', `/v1/projects/${p}/secrets/db:reveal`, { token: c.admin.token, body });
    expect(r.status, r.text).toBe(200);
    expect(r.body.value).toBe('s3cret');
    const audit = await d.api('GET', `/v1/projects/${p}/audit?page_size=200`, { token: c.admin.token });
    const row = audit.body.entries?.find?.((e: any) => e.request_id === r.headers.get('x-request-id')) ?? audit.body.events?.find?.((e: any) => e.request_id === r.headers.get('x-request-id'));
    expect(row, JSON.stringify(audit.body).slice(0, 500)).toBeDefined();
    expect(row.details.reason).toBe(reason);
  });
});
