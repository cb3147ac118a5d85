import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { cast, grant, makeUser } from '../helpers/fixtures.js';
import { archive, deployForm, waitState } from './helpers.js';

/**
 * Agent traffic splits (issue 23, docs/decisions/agents-traffic.md): pin, set-traffic, the
 * per-request split, validation, owner rights. Each revision's answer names it (K_REVISION).
 */
const REVISION_PY = `import os

def handle(event):
    return {"revision": os.environ.get("K_REVISION", ""), "marker": os.environ.get("MARKER", "")}
`;

let d: TestDaemon;
let c: Awaited<ReturnType<typeof cast>>;
let otherMember: { token: string };
const q = () => `?project=${c.project.slug}`;
const owner = () => c.member.token;

beforeAll(async () => {
  // Scale to zero far away: instances of the split must be seen running between steps.
  d = await startTestDaemon({ invokeAuthRequired: false });
  c = await cast(d);
  const u = await makeUser(d);
  grant(d, c.project.id, u.id, 'member');
  otherMember = u;
  const r = await deployForm(d, owner(), { name: 'tr', framework: 'function', runtime: 'python' }, archive({ 'main.py': REVISION_PY }), q());
  expect(r.status, JSON.stringify(r.body)).toBe(202);
  await waitState(d, owner(), 'tr', 'ready', c.project.slug);
  // A second revision from a settings change: same code, its own name.
  const env = await d.api('PATCH', `/v1/agents/tr/env${q()}`, { token: owner(), body: { set: { MARKER: 'two' } } });
  expect(env.status, JSON.stringify(env.body)).toBe(200);
}, 60_000);
afterAll(async () => d?.close());

const invokeRevision = async (): Promise<string> => {
  const r = await d.api('POST', `/v1/agents/tr/invoke${q()}`, { body: { message: 'which' } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.revision as string;
};
const setTraffic = (body: unknown, token = owner()) => d.api('POST', `/v1/agents/tr/set-traffic${q()}`, { token, body });
const pin = (body: unknown, token = owner()) => d.api('POST', `/v1/agents/tr/revisions${q()}`, { token, body });
/** Revisions with a running instance, as the daemon records them. */
const runningRevisions = () =>
  (d.db.prepare(`SELECT DISTINCT i.revision FROM agents_instances i JOIN agents_agents a ON a.id = i.agent_id WHERE a.name = 'tr' ORDER BY i.revision`).all() as { revision: string }[]).map((r) => r.revision);
async function until(what: string, cond: () => boolean, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('agent traffic splits', { timeout: 60_000 }, () => {
  it('by default every request goes to the latest revision, and the view says so', async () => {
    expect(await invokeRevision()).toBe('tr-00002');
    const view = await d.api('GET', `/v1/agents/tr${q()}`, { token: owner() });
    expect(view.body.traffic).toEqual([{ latest_revision: true, percent: 100 }]);
    expect(view.body.active_traffic).toEqual([{ revision_name: 'tr-00002', percent: 100 }]);
    const split = await d.api('GET', `/v1/agents/tr/set-traffic${q()}`, { token: owner() });
    expect(split.body).toEqual({ agent: 'tr', traffic: [{ latest_revision: true, percent: 100 }], active_traffic: [{ revision_name: 'tr-00002', percent: 100 }] });
  });

  it('pinning an old revision sends every request to it, and a new deploy keeps the pin', async () => {
    const r = await pin({ revision_name: 'tr-00001' });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.traffic).toEqual([{ revision_name: 'tr-00001', percent: 100 }]);
    expect(r.body.active_traffic).toEqual([{ revision_name: 'tr-00001', percent: 100 }]);
    for (let i = 0; i < 5; i++) expect(await invokeRevision()).toBe('tr-00001');
    const revs = await d.api('GET', `/v1/agents/tr/revisions${q()}`, { token: owner() });
    expect(revs.body.revisions.map((x: any) => [x.name, x.traffic_percent, x.serving])).toEqual([
      ['tr-00002', 0, false],
      ['tr-00001', 100, true],
    ]);
    // A real rebuild rolls tr-00003; the pinned split stays (Knative and Cloud Run keep a pin).
    const re = await d.api('POST', `/v1/agents/tr/redeploy${q()}`, { token: owner(), body: {} });
    expect(re.status, JSON.stringify(re.body)).toBe(202);
    await until('tr-00003 ready', () => (d.db.prepare(`SELECT state FROM agents_revisions WHERE name = 'tr-00003'`).get() as { state: string } | undefined)?.state === 'ready', 30_000);
    expect(await invokeRevision()).toBe('tr-00001');
    // The new revision proved it starts, then stopped: 0 % runs nothing.
    await until('only tr-00001 running', () => JSON.stringify(runningRevisions()) === '["tr-00001"]');
  });

  it('a 50/50 split over 200 invokes serves both revisions evenly, each on its own running instance', async () => {
    const r = await setTraffic({ traffic: [{ revision_name: 'tr-00001', percent: 50 }, { latest_revision: true, percent: 50 }] });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.active_traffic).toEqual([
      { revision_name: 'tr-00001', percent: 50 },
      { revision_name: 'tr-00003', percent: 50 },
    ]);
    const counts: Record<string, number> = {};
    for (let i = 0; i < 200; i++) {
      const rev = await invokeRevision();
      counts[rev] = (counts[rev] ?? 0) + 1;
    }
    expect(Object.keys(counts).sort()).toEqual(['tr-00001', 'tr-00003']);
    // Smooth weighted round robin is exact (100 and 100); the band allows another algorithm.
    for (const n of Object.values(counts)) expect(n).toBeGreaterThanOrEqual(80);
    expect(counts).toEqual({ 'tr-00001': 100, 'tr-00003': 100 });
    expect(runningRevisions()).toEqual(['tr-00001', 'tr-00003']);
    const revs = await d.api('GET', `/v1/agents/tr/revisions${q()}`, { token: owner() });
    expect(revs.body.revisions.map((x: any) => x.traffic_percent)).toEqual([50, 0, 50]);
  });

  it('validation errors name the rule, in the envelope', async () => {
    const cases: [unknown, number, string][] = [
      [{ traffic: [{ revision_name: 'tr-00001', percent: 60 }, { latest_revision: true, percent: 30 }] }, 400, 'traffic validation: percentages sum to 90; they must sum to 100'],
      [{ traffic: [{ revision_name: 'tr-00099', percent: 100 }] }, 400, 'traffic validation: traffic[0]: unknown revision tr-00099'],
      [{ traffic: [{ revision_name: 'tr-00001', percent: 50 }, { revision_name: 'tr-00001', percent: 50 }] }, 400, 'traffic validation: traffic[1]: duplicate target tr-00001'],
      [{ traffic: [{ revision_name: 'tr-00001', latest_revision: true, percent: 100 }] }, 400, 'traffic validation: traffic[0]: set either revision_name or latest_revision true, not both'],
      [{ traffic: [{ revision_name: 'tr-00001', percent: 150 }, { latest_revision: true, percent: -50 }] }, 400, 'traffic validation: traffic[0]: percent 150 is out of range (an integer from 0 to 100)'],
      [{ traffic: [{ revision_name: 'tr-00001', percent: 100 }], extra: 1 }, 400, 'unknown body field: extra'],
      [{}, 400, 'traffic is required: send the complete split, for example {"traffic":[{"latest_revision":true,"percent":100}]}'],
    ];
    for (const [body, status, error] of cases) {
      const r = await setTraffic(body);
      expect(r.status, JSON.stringify(body)).toBe(status);
      expect(r.body.error).toBe(error);
      expect(r.body.request_id).toMatch(/^req_/);
    }
    const tagged = await setTraffic({ traffic: [{ revision_name: 'tr-00001', percent: 100, tag: 'old' }] });
    expect(tagged.status).toBe(400);
    expect(tagged.body.error).toBe('unknown body field: traffic.0.tag');
    const pins: [unknown, string][] = [
      [{ revision_name: 'tr-00099' }, 'revision_name: unknown revision tr-00099 of agent tr (GET /v1/agents/tr/revisions lists them)'],
      [{}, 'give revision_name (the revision that takes every request) or latest_revision true (follow every new revision), not both'],
      [{ revision_name: 'tr-00001', latest_revision: true }, 'give revision_name (the revision that takes every request) or latest_revision true (follow every new revision), not both'],
      [{ revision: 'tr-00001' }, 'unknown body field: revision'],
    ];
    for (const [body, error] of pins) {
      const r = await pin(body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error).toBe(error);
    }
    // Nothing changed: the 50/50 split still stands.
    expect((await d.api('GET', `/v1/agents/tr/set-traffic${q()}`, { token: owner() })).body.traffic).toEqual([
      { revision_name: 'tr-00001', percent: 50 },
      { latest_revision: true, percent: 50 },
    ]);
  });

  it('a failed revision cannot take traffic (400), a deploying one not yet (409)', async () => {
    const setState = (state: string) => d.db.prepare(`UPDATE agents_revisions SET state = ?, message = ? WHERE name = 'tr-00002'`).run(state, state === 'failed' ? 'revision tr-00002 did not become ready: boom' : '');
    try {
      setState('failed');
      const failed = await setTraffic({ traffic: [{ revision_name: 'tr-00002', percent: 100 }] });
      expect(failed.status).toBe(400);
      expect(failed.body.error).toBe('traffic validation: traffic[0]: revision tr-00002 failed and cannot take traffic (revision tr-00002 did not become ready: boom)');
      setState('deploying');
      const deploying = await pin({ revision_name: 'tr-00002' });
      expect(deploying.status).toBe(409);
      expect(deploying.body.error).toBe('traffic validation: traffic[0]: revision tr-00002 is still deploying; set the split once it is ready');
    } finally {
      setState('ready');
    }
  });

  it('owner rights: outsiders and other plain members get 404, a project admin may set the split', async () => {
    const body = { traffic: [{ latest_revision: true, percent: 100 }] };
    for (const token of [c.outsider.token, otherMember.token]) {
      for (const [method, path, b] of [
        ['GET', '/set-traffic', undefined],
        ['POST', '/set-traffic', body],
        ['POST', '/revisions', { latest_revision: true }],
      ] as const) {
        const r = await d.api(method, `/v1/agents/tr${path}${q()}`, { token, body: b });
        expect(r.status, `${method} ${path}`).toBe(404);
        expect(r.body.error).toMatch(/not found|unknown agent tr/);
      }
    }
    expect((await d.api('POST', `/v1/agents/tr/set-traffic${q()}`, { body })).status).toBe(401);
    const byAdmin = await pin({ revision_name: 'tr-00003' }, c.admin.token);
    expect(byAdmin.status).toBe(200);
    expect(byAdmin.body.traffic).toEqual([{ revision_name: 'tr-00003', percent: 100 }]);
    const audit = d.db.prepare(`SELECT actor FROM acct_audit WHERE action = 'agent.traffic.set' ORDER BY ts DESC LIMIT 1`).get() as { actor: string };
    expect(audit.actor).toBe(c.admin.email);
  });

  it('latest_revision true returns to the default: the next new revision takes every request', async () => {
    const r = await pin({ latest_revision: true });
    expect(r.status).toBe(200);
    expect(r.body.traffic).toEqual([{ latest_revision: true, percent: 100 }]);
    expect((d.db.prepare(`SELECT traffic FROM agents_agents WHERE name = 'tr'`).get() as { traffic: string | null }).traffic).toBeNull();
    await until('tr-00001 retired', () => !runningRevisions().includes('tr-00001'));
    const env = await d.api('PATCH', `/v1/agents/tr/env${q()}`, { token: owner(), body: { set: { MARKER: 'four' } } });
    expect(env.status).toBe(200);
    expect(await invokeRevision()).toBe('tr-00004');
  });
});
