import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { controlEnv, serviceId, type ControlEnv } from './control-helpers.js';

/** Every route of spec 2 §4.3 against a real daemon: statuses, defaults, validation errors. */
let e: ControlEnv;
beforeAll(async () => {
  e = await controlEnv();
  // These tests make more revisions than the default Services quota admits (control-quota.test.ts tests it).
  e.d.db.prepare(`UPDATE acct_project_quotas SET value = 0 WHERE resource = 'services'`).run();
});
afterAll(() => e.d.close());

const create = (body: Record<string, unknown>, token?: string) => e.call('POST', '', body, token);

describe('create', () => {
  it('answers 202 with the defaults of the table', async () => {
    const r = await create({ name: 'hello', image: 'nginx:1.27' });
    expect(r.status).toBe(202);
    const s = r.body;
    expect(s).toMatchObject({
      name: 'hello',
      project: `projects/${e.people.project.short}/services/hello`,
      image: 'nginx:1.27',
      env: {},
      env_from: [],
      ports: [{ name: 'http1', container_port: 8080 }],
      resources: { requests: { cpu: '250m', memory: '512Mi' }, limits: { cpu: '1', memory: '512Mi' } },
      scaling: { min_scale: 0, max_scale: 10, container_concurrency: 80 },
      publish: { enabled: false },
      published: false,
      traffic: [{ latest_revision: true, percent: 100 }],
      timeout_seconds: 300,
      runtime_class_name: '',
      service_account_name: '',
      state: 'pending',
      ready: false,
      latest_created_revision: 'hello-00001',
      generation: 1,
      observed_generation: 0,
      url: `http://hello-${e.people.project.short}.apps.localhost:${e.d.port}`,
      active_traffic: [{ revision_name: 'hello-00001', percent: 100 }],
    });
    expect(s.internal_url).toMatch(new RegExp(`/services/${e.people.project.short}/hello$`));
    expect(s.external_url).toBeUndefined();
    expect(s.latest_ready_revision).toBeUndefined();
    expect(typeof s.message).toBe('string');
    expect(s.conditions.map((c: { type: string }) => c.type).sort()).toEqual(['Exposed', 'Ready', 'RuntimeClassApplied', 'ServiceReady', 'TrafficAccepted', 'VisibilityEnforced']);
    for (const c of s.conditions) {
      expect(['True', 'False', 'Unknown']).toContain(c.status);
      expect(c.reason).toEqual(expect.any(String));
      expect(Number.isNaN(Date.parse(c.last_transition_time))).toBe(false);
    }
    // The data plane was told: one revision, the timeout mirrored, the split resolved.
    const applied = e.plane.last(serviceId(e.d, e.people.project.id, 'hello'))!;
    expect(applied.revisions).toHaveLength(1);
    expect(applied.revisions[0]).toMatchObject({ revision: 'hello-00001', port: 8080, cpus: 1, memoryBytes: 512 * 1024 ** 2, timeoutSeconds: 300, env: { PLATFORM_REQUEST_TIMEOUT_SECONDS: '300' } });
    expect(applied.traffic).toEqual([{ revision: 'hello-00001', percent: 100 }]);
    expect(applied.scaling).toEqual({ minScale: 0, maxScale: 10, containerConcurrency: 80 });
    expect(applied.published).toBe(false);
  });

  it('409 when the name exists', async () => {
    const r = await create({ name: 'hello', image: 'nginx' });
    expect(r.status).toBe(409);
    expect(r.body.error).toMatch(/already exists/);
    expect(r.body.request_id).toBe(r.headers.get('x-request-id'));
  });

  it('name rules: required, pattern, 52 characters, reserved healthz', async () => {
    const ok52 = `a${'b'.repeat(51)}`;
    expect((await create({ name: ok52, image: 'nginx' })).status).toBe(202);
    for (const name of [undefined, '', `a${'b'.repeat(52)}`, 'Upper', '1abc', 'abc-', 'a_b', 'healthz']) {
      const r = await create({ name, image: 'nginx' });
      expect(r.status, String(name)).toBe(400);
      expect(r.body.error).toMatch(/^invalid name/);
    }
  });

  it('image required and checked', async () => {
    expect((await create({ name: 'noimage' })).body.error).toMatch(/^image required/);
    expect((await create({ name: 'noimage', image: '  ' })).status).toBe(400);
    const bad = await create({ name: 'noimage', image: 'not a reference' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/rejected by the platform/);
    const src = await create({ name: 'noimage', image: `source.platform.local/${e.people.project.short}/sha256-${'0'.repeat(64)}` });
    expect(src.status).toBe(400);
    expect(src.body.error).toMatch(/not a source uploaded/);
  });

  it('unknown fields are a 400 naming the field, at any depth', async () => {
    const r = await create({ name: 'strict', image: 'nginx', colour: 'red' });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('unknown body field: colour');
    const deep = await create({ name: 'strict', image: 'nginx', scaling: { min_scale: 1, maximum: 3 } });
    expect(deep.body.error).toBe('unknown body field: scaling.maximum');
    const invalidJson = await e.d.api('POST', e.base, { token: e.people.member.token, raw: '{"name":', headers: { 'content-type': 'application/json' } });
    expect(invalidJson.status).toBe(400);
    expect(invalidJson.body.error).toMatch(/^invalid JSON/);
  });

  it('bodies over 256 KiB are refused', async () => {
    const big = await create({ name: 'big', image: 'nginx', env: { BIG: 'x'.repeat(256 * 1024) } });
    expect(big.status).toBe(413);
    const under = await create({ name: 'big', image: 'nginx', env: { BIG: 'x'.repeat(200 * 1024) } });
    expect(under.status).toBe(202);
  });

  it('ports, resources, timeout and env rules', async () => {
    const two = await create({ name: 'p', image: 'nginx', ports: [{ container_port: 80 }, { container_port: 81 }] });
    expect(two.body.error).toMatch(/at most one port/);
    expect((await create({ name: 'p', image: 'nginx', ports: [{ container_port: 0 }] })).status).toBe(400);
    expect((await create({ name: 'p', image: 'nginx', ports: [{ container_port: 65536 }] })).status).toBe(400);
    expect((await create({ name: 'p', image: 'nginx', ports: [{ name: 'grpc', container_port: 80 }] })).status).toBe(400);
    expect((await create({ name: 'p', image: 'nginx', resources: { limits: { cpu: 'lots' } } })).body.error).toMatch(/not a CPU quantity/);
    expect((await create({ name: 'p', image: 'nginx', resources: { limits: { memory: '8Gi' } } })).body.error).toMatch(/at most 4Gi/);
    expect((await create({ name: 'p', image: 'nginx', resources: { requests: { cpu: '2' }, limits: { cpu: '1' } } })).body.error).toMatch(/must not exceed/);
    expect((await create({ name: 'p', image: 'nginx', timeout_seconds: 0 })).body.error).toMatch(/timeout_seconds must be between 1 and 3600/);
    expect((await create({ name: 'p', image: 'nginx', env: { 'BAD-NAME': 'x' } })).body.error).toMatch(/invalid env name/);
    const r = await create({ name: 'p', image: 'nginx', ports: [{ name: 'h2c', container_port: 9000 }], resources: { limits: { cpu: '500m' } }, timeout_seconds: 5000 });
    expect(r.status).toBe(202);
    // Sent resources replace the defaults entirely; above 3600 is clamped (spec 1 §8.5).
    expect(r.body).toMatchObject({ ports: [{ name: 'h2c', container_port: 9000 }], resources: { limits: { cpu: '500m' } }, timeout_seconds: 3600 });
    expect(r.body.resources.requests).toBeUndefined();
    const applied = e.plane.last(serviceId(e.d, e.people.project.id, 'p'))!;
    expect(applied.revisions[0]).toMatchObject({ port: 9000, cpus: 0.5, timeoutSeconds: 3600, env: { PLATFORM_REQUEST_TIMEOUT_SECONDS: '3600' } });
  });

  it('scaling validation: negative values, min above max; 0 max behaves as 10', async () => {
    for (const scaling of [{ min_scale: -1 }, { max_scale: -2 }, { container_concurrency: -1 }]) {
      const r = await create({ name: 's', image: 'nginx', scaling });
      expect(r.status).toBe(400);
      expect(r.body.error).toMatch(/must not be negative/);
    }
    const above = await create({ name: 's', image: 'nginx', scaling: { min_scale: 5, max_scale: 2 } });
    expect(above.body.error).toMatch(/min_scale \(5\) is above max_scale \(2\)/);
    expect((await create({ name: 's', image: 'nginx', scaling: { min_scale: 11, max_scale: 0 } })).status).toBe(400);
    const ok = await create({ name: 's', image: 'nginx', scaling: { min_scale: 3, max_scale: 0, container_concurrency: 0 } });
    expect(ok.status).toBe(202);
    expect(ok.body.scaling).toEqual({ min_scale: 3, max_scale: 0, container_concurrency: 0 });
    expect(e.plane.last(serviceId(e.d, e.people.project.id, 's'))!.scaling).toEqual({ minScale: 3, maxScale: 10, containerConcurrency: 80 });
  });

  it('traffic on create may name the revision it creates', async () => {
    const r = await create({ name: 't', image: 'nginx', traffic: [{ revision_name: 't-00001', percent: 100, tag: 'first' }] });
    expect(r.status).toBe(202);
    expect(r.body.active_traffic).toEqual([{ revision_name: 't-00001', percent: 100, tag: 'first', url: `http://first-t-${e.people.project.short}.apps.localhost:${e.d.port}` }]);
    expect((await create({ name: 't2', image: 'nginx', traffic: [{ revision_name: 't2-00002', percent: 100 }] })).body.error).toMatch(/unknown revision t2-00002/);
  });
});

describe('get, list, paging', () => {
  it('get answers the service and its generation as ETag; absent is 404', async () => {
    const r = await e.call('GET', '/hello');
    expect(r.status).toBe(200);
    expect(r.body.name).toBe('hello');
    expect(r.headers.get('etag')).toBe('"1"');
    const missing = await e.call('GET', '/nope');
    expect(missing.status).toBe(404);
    expect(missing.body.error).toBe('service nope not found');
  });

  it('lists by name with next_page_token omitted on the last page', async () => {
    const first = await e.call('GET', '?page_size=2');
    expect(first.status).toBe(200);
    expect(first.body.services).toHaveLength(2);
    expect(first.body.next_page_token).toEqual(expect.any(String));
    const names: string[] = first.body.services.map((s: { name: string }) => s.name);
    let token: string | undefined = first.body.next_page_token;
    while (token) {
      const page = await e.call('GET', `?page_size=2&page_token=${encodeURIComponent(token)}`);
      names.push(...page.body.services.map((s: { name: string }) => s.name));
      token = page.body.next_page_token;
      if (!token) expect('next_page_token' in page.body).toBe(false);
    }
    expect(names).toEqual([...names].sort());
    expect(names).toContain('hello');
    expect((await e.call('GET', '?page_size=201')).status).toBe(400);
    expect((await e.call('GET', '?page_token=forged')).status).toBe(400);
  });
});

describe('patch', () => {
  it('sparse: omitted fields untouched, explicit zero sets zero, scaling merges onto current values', async () => {
    await create({ name: 'patchy', image: 'nginx', env: { A: '1' }, scaling: { min_scale: 2, max_scale: 5, container_concurrency: 7 } });
    const r = await e.call('PATCH', '/patchy', { scaling: { min_scale: 0 } });
    expect(r.status).toBe(200);
    expect(r.body.scaling).toEqual({ min_scale: 0, max_scale: 5, container_concurrency: 7 });
    expect(r.body.env).toEqual({ A: '1' });
    expect(r.body.generation).toBe(2);
    // Scaling is not part of the template: no revision.
    expect(r.body.latest_created_revision).toBe('patchy-00001');
    const merged = await e.call('PATCH', '/patchy', { scaling: { max_scale: 3 } });
    expect(merged.body.scaling).toEqual({ min_scale: 0, max_scale: 3, container_concurrency: 7 });
    const invalid = await e.call('PATCH', '/patchy', { scaling: { min_scale: 4 } });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error).toMatch(/min_scale \(4\) is above max_scale \(3\)/);
    const zero = await e.call('PATCH', '/patchy', { env: {}, publish: { enabled: true } });
    expect(zero.body.env).toEqual({});
    expect(zero.body.published).toBe(true);
    expect(zero.body.latest_created_revision).toBe('patchy-00002');
  });

  it('a template change creates the next revision; a no-op patch changes nothing', async () => {
    const before = (await e.call('GET', '/patchy')).body;
    const same = await e.call('PATCH', '/patchy', { image: before.image, env: {}, scaling: {} });
    expect(same.status).toBe(200);
    expect(same.body.generation).toBe(before.generation);
    expect(same.body.latest_created_revision).toBe(before.latest_created_revision);
    const empty = await e.call('PATCH', '/patchy', {});
    expect(empty.body.generation).toBe(before.generation);
    for (const [i, change] of [
      { image: 'nginx:2' },
      { command: ['/bin/server'] },
      { args: ['--port', '80'] },
      { env: { B: '2' } },
      { ports: [{ container_port: 9090 }] },
      { resources: { limits: { cpu: '2', memory: '1Gi' } } },
      { timeout_seconds: 30 },
      { runtime_class_name: 'gvisor' },
    ].entries()) {
      const r = await e.call('PATCH', '/patchy', change);
      expect(r.status).toBe(200);
      expect(r.body.latest_created_revision).toBe(`patchy-${String(3 + i).padStart(5, '0')}`);
    }
    const revs = await e.call('GET', '/patchy/revisions');
    expect(revs.status).toBe(200);
    expect(revs.body.revisions.map((r: { name: string }) => r.name)).toEqual(Array.from({ length: 10 }, (_, i) => `patchy-${String(10 - i).padStart(5, '0')}`));
    const gens = revs.body.revisions.map((r: { generation: number }) => r.generation);
    expect(gens).toEqual([...gens].sort((a: number, b: number) => b - a));
    expect('next_page_token' in revs.body).toBe(false);
    // Nothing was ever ready, so latest_revision still routes to the newest one.
    expect(revs.body.revisions[0]).toMatchObject({ image: 'nginx:2', state: 'unknown', ready: false, replicas: 0, traffic_percent: 100 });
    const rc = (await e.call('GET', '/patchy')).body.conditions.find((c: { type: string }) => c.type === 'RuntimeClassApplied');
    expect(rc).toMatchObject({ status: 'False', reason: 'RuntimeClassUnavailable' });
  });

  it('a stale patch (If-Match with an older generation) is 409; the current one applies', async () => {
    const cur = await e.call('GET', '/patchy');
    const gen = cur.body.generation as number;
    const first = await e.call('PATCH', '/patchy', { env: { WHO: 'first' } }, undefined, { 'if-match': `"${gen}"` });
    expect(first.status).toBe(200);
    expect(first.headers.get('etag')).toBe(`"${gen + 1}"`);
    const second = await e.call('PATCH', '/patchy', { env: { WHO: 'second' } }, undefined, { 'if-match': `"${gen}"` });
    expect(second.status).toBe(409);
    expect(second.body.error).toMatch(/^concurrent modification/);
    expect((await e.call('GET', '/patchy')).body.env).toEqual({ WHO: 'first' });
    expect((await e.call('PATCH', '/patchy', {}, undefined, { 'if-match': 'yesterday' })).status).toBe(400);
    expect((await e.call('PATCH', '/patchy', { env: { WHO: 'third' } }, undefined, { 'if-match': String(gen + 1) })).status).toBe(200);
  });

  it('cannot rename; validations apply; unknown service 404', async () => {
    expect((await e.call('PATCH', '/patchy', { name: 'other' })).body.error).toMatch(/^invalid name: a service cannot be renamed/);
    expect((await e.call('PATCH', '/patchy', { name: 'patchy' })).status).toBe(200);
    expect((await e.call('PATCH', '/patchy', { scaling: { container_concurrency: -5 } })).status).toBe(400);
    expect((await e.call('PATCH', '/patchy', { image: '' })).body.error).toMatch(/^image required/);
    expect((await e.call('PATCH', '/patchy', { bogus: 1 })).body.error).toBe('unknown body field: bogus');
    expect((await e.call('PATCH', '/ghost', { env: {} })).status).toBe(404);
  });
});

describe('set-traffic', () => {
  beforeAll(async () => {
    await create({ name: 'split', image: 'nginx' });
    await e.call('PATCH', '/split', { image: 'nginx:2' });
  });

  const set = (traffic: unknown) => e.call('POST', '/split:set-traffic', traffic === undefined ? {} : { traffic });

  it('answers 202, echoes the request as traffic and shows the served split', async () => {
    const r = await set([
      { revision_name: 'split-00001', percent: 40, tag: 'old' },
      { latest_revision: true, percent: 60 },
    ]);
    expect(r.status).toBe(202);
    expect(r.body.traffic).toEqual([
      { revision_name: 'split-00001', percent: 40, tag: 'old' },
      { latest_revision: true, percent: 60 },
    ]);
    // Nothing has been ready yet, so latest_revision points at the newest revision.
    expect(r.body.active_traffic).toEqual([
      { revision_name: 'split-00001', percent: 40, tag: 'old', url: `http://old-split-${e.people.project.short}.apps.localhost:${e.d.port}` },
      { revision_name: 'split-00002', percent: 60 },
    ]);
    const applied = e.plane.last(serviceId(e.d, e.people.project.id, 'split'))!;
    expect(applied.traffic).toEqual([
      { revision: 'split-00001', percent: 40, tag: 'old' },
      { revision: 'split-00002', percent: 60 },
    ]);
    expect(applied.revisions.map((x) => x.revision).sort()).toEqual(['split-00001', 'split-00002']);
    const revs = (await e.call('GET', '/split/revisions')).body.revisions;
    expect(revs.map((x: { traffic_percent: number }) => x.traffic_percent)).toEqual([60, 40]);
    expect(revs[1]).toMatchObject({ tag: 'old', url: expect.stringContaining('old-split-') });
  });

  it('every traffic validation', async () => {
    const cases: [unknown, RegExp][] = [
      [[{ latest_revision: true, percent: 90 }], /sum to 90; they must sum to 100/],
      [[], /sum to 0/],
      [[{ latest_revision: true, percent: 101 }], /out of range/],
      [[{ latest_revision: true, percent: -1 }, { revision_name: 'split-00001', percent: 101 }], /out of range/],
      [[{ latest_revision: true, percent: 50.5 }, { revision_name: 'split-00001', percent: 49.5 }], /out of range/],
      [[{ percent: 100 }], /needs revision_name or latest_revision/],
      [[{ latest_revision: false, percent: 100 }], /needs revision_name or latest_revision/],
      [[{ revision_name: 'split-00001', latest_revision: true, percent: 100 }], /not both/],
      [[{ revision_name: 'split-00001', percent: 50 }, { revision_name: 'split-00001', percent: 50 }], /duplicate target split-00001/],
      [[{ latest_revision: true, percent: 50 }, { latest_revision: true, percent: 50 }], /duplicate target/],
      [[{ revision_name: 'split-00001', percent: 50, tag: 'x' }, { latest_revision: true, percent: 50, tag: 'x' }], /duplicate tag x/],
      [[{ revision_name: 'split-00009', percent: 100 }], /unknown revision split-00009/],
      [[{ latest_revision: true, percent: 100, tag: 'Bad_Tag' }], /invalid tag/],
    ];
    for (const [traffic, msg] of cases) {
      const r = await set(traffic);
      expect(r.status, JSON.stringify(traffic)).toBe(400);
      expect(r.body.error).toMatch(/^traffic validation/);
      expect(r.body.error).toMatch(msg);
    }
    const missing = await set(undefined);
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatch(/^traffic is required/);
    expect((await e.call('POST', '/split:set-traffic', { traffic: [{ latest_revision: true, percent: 100 }], extra: 1 })).body.error).toBe('unknown body field: extra');
    expect((await e.call('POST', '/split:set-traffic', { traffic: [{ latest_revision: true, percent: 100, weight: 1 }] })).body.error).toBe('unknown body field: traffic.0.weight');
    expect((await e.call('POST', '/ghost:set-traffic', { traffic: [{ latest_revision: true, percent: 100 }] })).status).toBe(404);
  });

  it('patch takes the same traffic validation, and may route to the revision it creates', async () => {
    expect((await e.call('PATCH', '/split', { traffic: [{ latest_revision: true, percent: 10 }] })).body.error).toMatch(/^traffic validation/);
    const r = await e.call('PATCH', '/split', { image: 'nginx:3', traffic: [{ revision_name: 'split-00003', percent: 100 }] });
    expect(r.status).toBe(200);
    expect(r.body.active_traffic).toEqual([{ revision_name: 'split-00003', percent: 100 }]);
  });

  it('unknown custom verbs are 404 naming the supported one', async () => {
    const r = await e.call('POST', '/split:rollback', {});
    expect(r.status).toBe(404);
    expect(r.body.error).toBe('unknown custom verb :rollback (only :set-traffic is supported)');
    expect((await e.call('POST', '/split:set-traffic-now', {})).status).toBe(404);
  });
});

describe('logs, spec, metrics, health', () => {
  it('logs delegate to the data plane with tail and follow', async () => {
    const r = await e.call('GET', '/hello/logs');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(r.text).toBe('tail=500 follow=false\n');
    expect((await e.call('GET', '/hello/logs?tail=10000&follow=true')).text).toBe('tail=10000 follow=true\n');
    for (const q of ['tail=0', 'tail=10001', 'tail=abc', 'follow=maybe', 'lines=3']) expect((await e.call('GET', `/hello/logs?${q}`)).status, q).toBe(400);
    expect((await e.call('GET', '/ghost/logs')).status).toBe(404);
  });

  it('spec answers service, yaml and note; secret-looking env values are redacted', async () => {
    await create({ name: 'specd', image: 'nginx', env: { API_KEY: 'k-123', DB_PASSWORD: 'pw', MODE: 'prod' } });
    const r = await e.call('GET', '/specd/spec');
    expect(r.status).toBe(200);
    expect(r.body.service).toBe('specd');
    expect(r.body.note).toEqual(expect.any(String));
    expect(r.body.yaml).toMatch(/apiVersion: serving.knative.dev\/v1/);
    expect(r.body.yaml).toMatch(/kind: Service/);
    expect(r.body.yaml).not.toMatch(/k-123|: pw\b/);
    expect(r.body.yaml).toMatch(/\*\*\*REDACTED\*\*\*/);
    expect(r.body.yaml).toMatch(/value: prod/);
    expect(r.body.yaml).not.toMatch(/conditions|observed_generation|internal_url/);
  });

  it('metrics: the live readout fields', async () => {
    const r = await e.call('GET', '/split/metrics');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      service: 'split',
      instances: { current: 0, desired: 0 },
      state: 'pending',
      ready: false,
      readiness: { state: 'pending', ready: false },
      scaling: { min_scale: 0, max_scale: 10, container_concurrency: 80 },
      note: expect.any(String),
    });
    expect(r.body.readiness.last_transition_time).toEqual(expect.any(String));
    expect(r.body.revisions[0]).toEqual({ name: 'split-00003', generation: expect.any(Number), replicas: 0, state: 'unknown', ready: false, traffic_percent: 100, latest_ready: false, latest_created: true });
  });

  it('healthz: no credential, always 200, the body fields', async () => {
    const r = await e.d.api('GET', `${e.base}/healthz`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ status: 'ok', service: 'serverless-api', database: 'ok', sessions: 'ok', orchestration: 'ok', crd: 'ok' });
    expect((await e.d.api('GET', '/v1/projects/not-a-uuid/services/healthz')).status).toBe(200);
  });
});

describe('who may do what', () => {
  it('outsiders get 404 everywhere, non-UUID projects 404, anonymous 401', async () => {
    const o = e.people.outsider.token;
    for (const [m, p, b] of [
      ['GET', '', undefined],
      ['POST', '', { name: 'x', image: 'nginx' }],
      ['GET', '/hello', undefined],
      ['PATCH', '/hello', {}],
      ['DELETE', '/hello', undefined],
      ['GET', '/hello/revisions', undefined],
      ['POST', '/hello:set-traffic', { traffic: [{ latest_revision: true, percent: 100 }] }],
      ['POST', '/hello:nope', {}],
      ['GET', '/hello/logs', undefined],
      ['GET', '/hello/spec', undefined],
      ['GET', '/hello/metrics', undefined],
      ['POST', '/sources', undefined],
    ] as const) {
      const r = await e.call(m, p, b, o);
      expect(r.status, `${m} ${p}`).toBe(404);
      expect(r.body.error).toBe('project not found');
      const nonUuid = await e.d.api(m, `/v1/projects/${e.people.project.short}/services${p}`, { token: e.people.member.token, body: b });
      expect(nonUuid.status, `non-UUID ${m} ${p}`).toBe(404);
      expect((await e.d.api(m, `${e.base}${p}`, { body: b })).status).toBe(401);
    }
  });

  it('delete: a plain member gets 403, the project admin 204; the data plane releases it', async () => {
    const r = await e.call('DELETE', '/hello');
    expect(r.status).toBe(403);
    const id = serviceId(e.d, e.people.project.id, 'hello');
    const ok = await e.call('DELETE', '/hello', undefined, e.people.admin.token);
    expect(ok.status).toBe(204);
    expect(ok.text).toBe('');
    expect(e.plane.removed).toContain(id);
    expect((await e.call('GET', '/hello')).status).toBe(404);
    expect((await e.call('DELETE', '/hello', undefined, e.people.admin.token)).status).toBe(404);
    // The name is free again, with revisions starting over.
    expect((await create({ name: 'hello', image: 'nginx' })).body.latest_created_revision).toBe('hello-00001');
  });

  it('a member service-account key can use the member routes', async () => {
    expect((await e.call('GET', '', undefined, e.people.sa.token)).status).toBe(200);
    expect((await create({ name: 'by-sa', image: 'nginx' }, e.people.sa.token)).status).toBe(202);
    expect((await e.call('DELETE', '/by-sa', undefined, e.people.sa.token)).status).toBe(403);
  });

  it('a project with services cannot be deleted', async () => {
    const r = await e.d.api('DELETE', `/v1/projects/${e.people.project.id}`, { token: e.people.admin.token });
    expect(r.status).toBe(409);
    expect(r.body.error).toMatch(/serverless service/);
  });
});
