import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { cast, grant, makeProject, makeUser } from '../helpers/fixtures.js';
import { deployAgent } from '../knowledge/fixtures.js';
import { topicsPath } from '../messaging/helpers.js';
import { idx, vectorConfig } from '../vector/helpers.js';

/**
 * GET /v1/search: names across the caller's projects. Two projects hold resources named alike
 * ("orders…"): a caller of one must never see the other's.
 */
let d: TestDaemon;
let a: Awaited<ReturnType<typeof cast>>;
let b: { project: { id: string; slug: string }; admin: { id: string; token: string } };

async function seed(adminToken: string, token: string, projectId: string, slug: string, suffix: string) {
  const ok = (r: { status: number; text: string }, want: number) => expect(r.status, r.text).toBe(want);
  ok(await d.api('POST', topicsPath(projectId), { token: adminToken, body: { name: `orders-${suffix}` } }), 201);
  ok(await d.api('POST', idx(projectId), { token, body: { name: `orders-vec-${suffix}`, dimensions: 3 } }), 201);
  ok(await d.api('POST', `/v1/projects/${projectId}/secrets`, { token, body: { name: `orders-key-${suffix}`, value: 'hunter2' } }), 201);
  await deployAgent(d, token, `orders-bot-${suffix}`, slug);
}

beforeAll(async () => {
  d = await startTestDaemon({ invokeAuthRequired: false, ...vectorConfig() });
  a = await cast(d);
  const project = makeProject(d);
  const admin = await makeUser(d);
  grant(d, project.id, admin.id, 'admin');
  b = { project, admin };
  await seed(a.admin.token, a.member.token, a.project.id, a.project.slug, 'a');
  await seed(b.admin.token, b.admin.token, b.project.id, b.project.slug, 'b');
}, 60_000);
afterAll(async () => d?.close());

const search = (token: string | undefined, query: string) => d.api('GET', `/v1/search?${query}`, { token });
const names = (r: { body: any }) => r.body.results.map((x: any) => `${x.kind}:${x.name}`).sort();

describe('GET /v1/search', () => {
  it('finds every kind by name in the caller’s projects, best match first', async () => {
    const r = await search(a.member.token, 'q=orders');
    expect(r.status, r.text).toBe(200);
    expect(names(r)).toEqual(['function:orders-bot-a', 'index:orders-vec-a', 'secret:orders-key-a', 'topic:orders-a']);
    expect(r.body.results[0]).toMatchObject({ name: 'orders-a', kind: 'topic', project: a.project.slug, project_id: a.project.id, match: 'prefix' });
    expect(r.body.truncated).toBe(false);
    const exact = await search(a.member.token, 'q=ORDERS-VEC-A');
    expect(exact.body.results).toEqual([expect.objectContaining({ kind: 'index', name: 'orders-vec-a', match: 'exact' })]);
    const sub = await search(a.member.token, 'q=bot');
    expect(sub.body.results).toEqual([expect.objectContaining({ kind: 'function', name: 'orders-bot-a', match: 'substring' })]);
    expect((await search(a.member.token, 'q=orders&kind=secret')).body.results.map((x: any) => x.name)).toEqual(['orders-key-a']);
    const lim = await search(a.member.token, 'q=orders&limit=2');
    expect(lim.body.results).toHaveLength(2);
    expect(lim.body.truncated).toBe(true);
  });

  it("never returns another project's resources", async () => {
    // b's names contain "b"; neither caller sees the other's, whatever the query or ?project=.
    for (const q of ['q=orders', 'q=-b', 'q=a', 'q=e']) {
      const ra = (await search(a.member.token, q)).body.results;
      const rb = (await search(b.admin.token, q)).body.results;
      expect(ra.length + rb.length).toBeGreaterThan(0);
      for (const x of ra) expect([x.project_id, x.name.endsWith('-b')]).toEqual([a.project.id, false]);
      for (const x of rb) expect([x.project_id, x.name.endsWith('-a')]).toEqual([b.project.id, false]);
    }
    expect(names(await search(b.admin.token, 'q=orders'))).toEqual(['function:orders-bot-b', 'index:orders-vec-b', 'secret:orders-key-b', 'topic:orders-b']);
    expect((await search(a.member.token, `q=orders&project=${b.project.slug}`)).status).toBe(404);
    expect((await search(a.outsider.token, 'q=orders')).body.results).toEqual([]);
    // A plain member sees only the agents it deployed; the project admin sees all of them.
    await deployAgent(d, a.admin.token, 'orders-admin-bot', a.project.slug);
    expect(names(await search(a.member.token, 'q=bot'))).toEqual(['function:orders-bot-a']);
    expect(names(await search(a.admin.token, 'q=bot'))).toEqual(['function:orders-admin-bot', 'function:orders-bot-a']);
    // A service-account key sees its own project only.
    expect(names(await search(a.sa.token, 'q=orders-key'))).toEqual(['secret:orders-key-a']);
  });

  it('never returns secret values, and validates its query', async () => {
    expect((await search(a.member.token, 'q=orders')).text).not.toContain('hunter2');
    expect((await search(a.member.token, '')).status).toBe(400);
    expect((await search(a.member.token, 'q=x&kind=planet')).status).toBe(400);
    expect((await search(a.member.token, 'q=x&limit=0')).status).toBe(400);
    expect((await search(a.member.token, 'q=x&limit=201')).status).toBe(400);
    expect((await search(undefined, 'q=orders')).status).toBe(401);
  });
});
