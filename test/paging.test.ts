import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from './helpers/daemon.js';
import { grant, makeProject, makeUser } from './helpers/fixtures.js';

let d: TestDaemon;
let user: Awaited<ReturnType<typeof makeUser>>;
let other: Awaited<ReturnType<typeof makeUser>>;
beforeAll(async () => {
  d = await startTestDaemon();
  user = await makeUser(d);
  other = await makeUser(d);
  for (let i = 0; i < 7; i++) grant(d, makeProject(d, { slug: `page-${i}` }).id, user.id, 'member');
  for (let i = 0; i < 3; i++) grant(d, makeProject(d, { slug: `other-${i}` }).id, other.id, 'member');
});
afterAll(() => d.close());

const list = (token: string, q: string) => d.api('GET', `/v1/projects${q}`, { token });

describe('paging (spec 1 §4.1)', () => {
  it('walks every item exactly once in pages of the requested size', async () => {
    const seen: string[] = [];
    let token = '';
    let pages = 0;
    do {
      const r = await list(user.token, `?page_size=3${token ? `&page_token=${encodeURIComponent(token)}` : ''}`);
      expect(r.status).toBe(200);
      expect(r.body.projects.length).toBeLessThanOrEqual(3);
      seen.push(...r.body.projects.map((p: { slug: string }) => p.slug));
      token = r.body.next_page_token ?? '';
      pages++;
    } while (token);
    expect(pages).toBe(3);
    expect(seen).toEqual([...Array(7).keys()].map((i) => `page-${i}`));
  });

  it('limit is an alias of page_size; the default is 50', async () => {
    expect((await list(user.token, '?limit=2')).body.projects).toHaveLength(2);
    const all = await list(user.token, '');
    expect(all.body.projects).toHaveLength(7);
    expect(all.body.next_page_token).toBeUndefined();
  });

  it('rejects sizes outside 1..200 instead of clamping', async () => {
    for (const bad of ['0', '201', '-1', 'abc', '1.5']) {
      const r = await list(user.token, `?page_size=${bad}`);
      expect(r.status, bad).toBe(400);
      expect(r.body.error).toBe('page_size must be between 1 and 200');
    }
    expect((await list(user.token, '?page_size=200')).status).toBe(200);
    expect((await list(user.token, '?limit=500')).status).toBe(400);
  });

  it('a tampered token is 400', async () => {
    const first = await list(user.token, '?page_size=2');
    const tok: string = first.body.next_page_token;
    const [body, mac] = tok.split('.');
    const forged = Buffer.from(JSON.stringify({ l: JSON.parse(Buffer.from(body!, 'base64url').toString()).l, o: 0 })).toString('base64url');
    for (const bad of [`${forged}.${mac}`, `${body}.${mac!.slice(0, -2)}AA`, 'garbage', `${body}`]) {
      const r = await list(user.token, `?page_token=${encodeURIComponent(bad)}`);
      expect(r.status, bad).toBe(400);
      expect(r.body.error).toMatch(/page_token/);
    }
  });

  it('a token issued by another list is 400', async () => {
    const first = await list(user.token, '?page_size=2');
    // Each caller's project list is its own list: another caller cannot continue it.
    const r = await list(other.token, `?page_size=2&page_token=${encodeURIComponent(first.body.next_page_token)}`);
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('page_token was issued for a different list');
    const { Pager } = await import('../src/daemon/http/paging.js');
    const pager = new Pager(Buffer.alloc(32, 7));
    const page = pager.parse({ page_size: '1' }, 'list-a');
    const next = pager.next(page, true)!;
    expect(() => pager.parse({ page_token: next }, 'list-b')).toThrow(/issued for a different list/);
    expect(pager.parse({ page_token: next }, 'list-a').offset).toBe(1);
  });
});
