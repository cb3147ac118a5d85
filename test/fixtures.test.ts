import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from './helpers/daemon.js';
import { cast } from './helpers/fixtures.js';

let d: TestDaemon;
beforeAll(async () => {
  d = await startTestDaemon();
});
afterAll(() => d.close());

describe('project visibility through GET /v1/projects/{id} (404-not-403)', () => {
  it('admin, member and platform admin see it with their roles; outsiders get 404', async () => {
    const c = await cast(d);
    const path = `/v1/projects/${c.project.id}`;
    expect((await d.api('GET', path, { token: c.admin.token })).body).toMatchObject({ your_role: 'admin', your_metadata_role: 'admin' });
    expect((await d.api('GET', path, { token: c.member.token })).body).toMatchObject({ your_role: 'member', your_metadata_role: 'member' });
    const pa = (await d.api('GET', path, { token: c.platformAdmin.token })).body;
    expect(pa.your_metadata_role).toBe('admin');
    expect(pa.your_role).toBeUndefined();
    const out = await d.api('GET', path, { token: c.outsider.token });
    const missing = await d.api('GET', `/v1/projects/00000000-0000-4000-8000-000000000000`, { token: c.outsider.token });
    expect(out.status).toBe(404);
    expect(out.body.error).toBe(missing.body.error);
    expect((await d.api('GET', path, { token: c.sa.token })).status).toBe(200);
    expect((await d.api('GET', '/v1/projects', { token: c.sa.token })).status).toBe(403);
  });
});
