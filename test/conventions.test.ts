import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from './helpers/daemon.js';

let d: TestDaemon;
beforeAll(async () => {
  d = await startTestDaemon();
});
afterAll(() => d.close());

const expectEnvelope = (r: { status: number; body: any; headers: Headers }, status: number, message?: RegExp) => {
  expect(r.status).toBe(status);
  expect(Object.keys(r.body).sort()).toEqual(expect.arrayContaining(['error', 'request_id']));
  expect(r.body.request_id).toBe(r.headers.get('x-request-id'));
  if (message) expect(r.body.error).toMatch(message);
};

describe('shared conventions (spec 1 §4.1, §7)', () => {
  it('healthz answers 200 without a credential and carries a request id', async () => {
    const r = await d.api('GET', '/healthz');
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('ok');
    expect(r.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{24}$/);
  });

  it('unrouted paths give 404 and wrong methods 405, both in the envelope', async () => {
    expectEnvelope(await d.api('GET', '/v1/nothing-here'), 404, /no route/);
    const r = await d.api('DELETE', '/v1/auth/login');
    expectEnvelope(r, 405, /not allowed/);
    expect(r.headers.get('allow')).toBe('POST');
  });

  it('a management call without a credential gets 401 with the sign-in hint', async () => {
    expectEnvelope(await d.api('GET', '/v1/projects'), 401, /^this is a management endpoint.*POST \/v1\/auth\/login/);
  });

  it('an invalid credential is treated as none', async () => {
    for (const token of ['garbage', 'svc_aaaaaaaaaaaa_' + 'x'.repeat(40), 'eyJhbGciOiJIUzI1NiJ9.e30.bad']) {
      expectEnvelope(await d.api('GET', '/v1/auth/me', { token }), 401);
    }
  });

  it('unknown body fields are rejected with 400 naming the field', async () => {
    const r = await d.api('POST', '/v1/auth/login', { body: { email: 'a@b.c', password: 'x', remember: true } });
    expectEnvelope(r, 400, /unknown body field: remember/);
  });

  it('missing fields, bad JSON and oversized bodies are 4xx in the envelope', async () => {
    expectEnvelope(await d.api('POST', '/v1/auth/login', { body: { email: 'a@b.c' } }), 400, /missing required field: password/);
    expectEnvelope(
      await d.api('POST', '/v1/auth/login', { raw: '{"email":', headers: { 'content-type': 'application/json' } }),
      400,
      /invalid JSON/,
    );
    const big = { email: 'a@b.c', password: 'x'.repeat(9 * 1024) };
    expectEnvelope(await d.api('POST', '/v1/auth/login', { body: big }), 413, /exceeds 8192 bytes/);
  });

  it('a {projectID} that is not a UUID: 400 on vector and cache, 404 on messaging (spec 3 §7); slugs elsewhere', async () => {
    const token = await d.adminToken();
    expectEnvelope(await d.api('GET', '/v1/projects/default/indexes', { token }), 400, /^malformed project id: project id must be a UUID$/);
    expectEnvelope(await d.api('GET', '/v1/projects/default/memorystores', { token }), 400, /^malformed project id/);
    expectEnvelope(await d.api('GET', '/v1/projects/default/topics', { token }), 404, /project not found/);
    const project = await d.api('GET', '/v1/projects/default', { token });
    expect(project.status).toBe(200);
    expect((await d.api('GET', `/v1/projects/${project.body.id}/indexes`, { token })).status).toBe(200);
    expect((await d.api('GET', `/v1/projects/${project.body.id}/topics`, { token })).status).toBe(200);
  });
});
