import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from './helpers/daemon.js';

let d: TestDaemon;
beforeAll(async () => {
  d = await startTestDaemon();
});
afterAll(() => d.close());

describe('OpenAPI document generated from the contracts', () => {
  it('lists every registered route with its body schema, strict where the daemon is strict', async () => {
    const r = await d.api('GET', '/v1/openapi.json');
    expect(r.status).toBe(200);
    expect(r.body.openapi).toBe('3.1.0');
    const contracts = d.app.router.contracts();
    for (const c of contracts) expect(r.body.paths[c.path]?.[c.method.toLowerCase()]?.operationId).toBe(c.id);
    const login = r.body.paths['/v1/auth/login'].post;
    expect(login.requestBody.content['application/json'].schema).toMatchObject({
      type: 'object',
      required: ['email', 'password'],
      additionalProperties: false,
    });
    expect(login.security).toEqual([]);
    expect(r.body.paths['/v1/projects'].get.parameters.map((p: { name: string }) => p.name)).toEqual(['page_size', 'limit', 'page_token']);
  });
});
