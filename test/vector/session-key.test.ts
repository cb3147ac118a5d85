import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestDaemon } from '../helpers/daemon.js';
import { cast } from '../helpers/fixtures.js';
import { withBrokenSessionKey } from '../helpers/session-key.js';
import { idx, readyIndex, startVectorDaemon } from './helpers.js';

/**
 * spec 3 §5 and §7: a session key the vector service cannot load gives 503 (it cannot verify
 * credentials). The key lives in the state directory (keys/signing.key) and is re-read when it
 * changes, so damaging or removing it shows at once and restoring it heals.
 */
describe('vector API without a loadable session key', () => {
  let d: TestDaemon;
  let c: Awaited<ReturnType<typeof cast>>;
  beforeAll(async () => {
    d = await startVectorDaemon({ readyDelayMs: 0 });
    c = await cast(d);
    await readyIndex(d, c.member.token, c.project.id, { name: 'docs', dimensions: 2 });
  });
  afterAll(() => d?.close());

  it('every vector platform route answers 503 naming the key; restoring it heals', async () => {
    const p = c.project.id;
    const routes: Array<[string, string, string, unknown?]> = [
      ['GET', idx(p), c.member.token],
      ['POST', idx(p), c.member.token, { name: 'blocked', dimensions: 2 }],
      ['GET', idx(p, 'docs'), c.member.token],
      ['PATCH', idx(p, 'docs'), c.admin.token, { replicas: 2 }],
      ['DELETE', idx(p, 'docs'), c.admin.token],
      ['POST', `${idx(p, 'docs')}:upsert`, c.member.token, { points: [{ id: 1, vector: [1, 0] }] }],
      ['POST', `${idx(p, 'docs')}:query`, c.member.token, { vector: [1, 0] }],
      ['POST', `${idx(p, 'docs')}:scroll`, c.member.token, {}],
      ['POST', `${idx(p, 'docs')}:delete-points`, c.member.token, { ids: [1] }],
      ['POST', `${idx(p, 'docs')}:nope`, c.member.token, {}],
      ['GET', `/v1/projects/${p}/vectordb/credentials`, c.admin.token],
    ];
    await withBrokenSessionKey(d.home, async (reason) => {
      for (const [method, path, token, body] of routes) {
        const r = await d.api(method, path, { token, body });
        expect(r.status, `${method} ${path}`).toBe(503);
        expect(r.body.error).toMatch(reason);
        expect(r.body.error).toMatch(/the vector service cannot verify credentials/);
        expect(r.body.request_id).toBe(r.headers.get('x-request-id'));
      }
    });
    expect((await d.api('GET', idx(p, 'docs'), { token: c.member.token })).body.index).toMatchObject({ name: 'docs', replicas: 1 });
    expect((await d.api('POST', `${idx(p, 'docs')}:scroll`, { token: c.member.token, body: {} })).body.points).toEqual([]);
  });
});
