import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { archive, deployForm, HELLO_PY } from '../agents/helpers.js';
import { controlEnv, ready, serviceId, type ControlEnv } from './control-helpers.js';

/**
 * Spec 1 §8.3: agents, functions and serverless revisions fill one Services quota (an agent or
 * function one entry, every revision two for good); once it is full a new revision is recorded
 * not_ready and never runs, a new agent is refused; agents and services never share a name (they
 * would share one public address).
 */
let e: ControlEnv;
let code: Buffer;
beforeAll(async () => {
  e = await controlEnv();
  code = archive({ 'main.py': HELLO_PY });
  e.d.db.prepare(`UPDATE acct_project_quotas SET value = 5 WHERE project_id = ? AND resource = 'services'`).run(e.people.project.id);
});
afterAll(async () => {
  await e.d.close();
});

const q = () => `?project=${e.people.project.slug}`;
const fn = (name: string) => ({ name, framework: 'function', runtime: 'python' });
const deploy = (name: string) => deployForm(e.d, e.people.member.token, fn(name), code, q());
const servicesUse = async () => {
  const r = await e.d.api('GET', `/v1/projects/${e.people.project.id}/quota`, { token: e.people.member.token });
  return r.body.quotas.find((x: { resource: string }) => x.resource === 'services');
};

describe('one Services quota for agents and serverless revisions', () => {
  it('revisions hold two entries each, agents one; the readout sums both areas', async () => {
    expect((await e.call('POST', '', { name: 'a', image: 'nginx:1' })).status).toBe(202);
    expect(await servicesUse()).toMatchObject({ used: 2, limit: 5, source: 'agents,serverless' });
    expect((await deploy('fa')).status).toBe(202);
    expect((await servicesUse()).used).toBe(3);
    expect((await e.call('PATCH', '/a', { env: { V: '2' } })).body.latest_created_revision).toBe('a-00002');
    e.plane.emit(serviceId(e.d, e.people.project.id, 'a'), 'a-00002', ready());
    expect((await servicesUse()).used).toBe(5);
  });

  it('a revision that does not fit is not_ready with the numbers, never handed to the data plane, and holds nothing', async () => {
    const p = await e.call('PATCH', '/a', { env: { V: '3' } });
    expect(p.status).toBe(200);
    expect(p.body.latest_created_revision).toBe('a-00003');
    const revs = (await e.call('GET', '/a/revisions')).body.revisions;
    const refused = revs.find((r: { name: string }) => r.name === 'a-00003');
    expect(refused).toMatchObject({ state: 'not_ready', ready: false });
    expect(refused.message).toMatch(/service limit: 5 of 5 services used/);
    expect(refused.message).toMatch(/will not become ready/);
    expect(e.plane.last(serviceId(e.d, e.people.project.id, 'a'))!.revisions.map((r) => r.revision)).not.toContain('a-00003');
    expect((await servicesUse()).used).toBe(5);
    const s = (await e.call('GET', '/a')).body;
    expect(s.message).toMatch(/a-00003 is not ready \(ServiceQuotaExceeded\)/);
    expect(s.active_traffic).toEqual([{ revision_name: 'a-00002', percent: 100 }]);
  });

  it('a new agent or function is refused with the numbers while the quota is full; a redeploy is not', async () => {
    const r = await deploy('fb');
    expect(r.status).toBe(409);
    expect(r.body.error).toMatch(/service limit: 5 of 5 services used/);
    // fa already holds its entry: deploying it again is a redeploy, never a quota refusal.
    expect((await deploy('fa')).body.error ?? '').not.toMatch(/service limit/);
  });

  it('an agent and a service never share a name, in either order', async () => {
    const s = await e.call('POST', '', { name: 'fa', image: 'nginx:1' });
    expect(s.status).toBe(409);
    expect(s.body.error).toMatch(/fa is already the name of function fa/);
    const a = await deploy('a');
    expect(a.status).toBe(409);
    expect(a.body.error).toMatch(/a is already the name of serverless service a/);
  });

  it('deleting the service frees its entries for an agent', async () => {
    expect((await e.d.api('DELETE', `${e.base}/a`, { token: e.people.admin.token })).status).toBe(204);
    expect((await servicesUse()).used).toBe(1);
    expect((await deploy('fb')).status).toBe(202);
  });
});
