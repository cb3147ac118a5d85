import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestDaemon } from '../helpers/daemon.js';
import { escapeAttempts, execute, sbx, startSandboxDaemon, waitWarm } from './helpers.js';

/**
 * The code sandbox in process mode (bubblewrap): every status of spec 2 §7's sandbox table that
 * execute can give, and every escape attempt of issue 22, each of which must fail.
 */
let d: TestDaemon;
beforeAll(async () => {
  d = await startSandboxDaemon({ mode: 'process' });
  await waitWarm(d, 1);
});
afterAll(() => d?.close());

describe('execute (process mode)', () => {
  it('runs a snippet and returns the spec 2 §2.6 result', async () => {
    const r = await execute(d, { code: 'import sys\nprint("out")\nprint("err", file=sys.stderr)\nsys.exit(3)' });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['duration_ms', 'exit_code', 'sandbox_id', 'stderr', 'stdout']);
    expect(r.body).toMatchObject({ stdout: 'out\n', stderr: 'err\n', exit_code: 3 });
    expect(Number.isInteger(r.body.duration_ms)).toBe(true);
    const raised = await execute(d, { code: 'raise ValueError("boom")', language: 'python', timeout_s: 0 });
    expect(raised.body.exit_code).toBe(1);
    expect(raised.body.stderr).toMatch(/ValueError: boom/);
    expect(raised.body.stderr).not.toMatch(/runner\.py/);
  });

  it('400s: invalid JSON, unsupported language, timeout_s out of range, unknown field', async () => {
    const bad = await sbx(d, 'POST', '/v1/execute', undefined, '{"code": ');
    expect(bad.status).toBe(400);
    expect(bad.body.request_id).toBeTruthy();
    const lang = await execute(d, { code: 'print(1)', language: 'ruby' });
    expect(lang.status).toBe(400);
    expect(lang.body.error).toMatch(/unsupported language: ruby/);
    for (const t of [61, -1, 1000]) {
      const r = await execute(d, { code: 'print(1)', timeout_s: t });
      expect(r.status).toBe(400);
      expect(r.body.error).toMatch(/timeout_s/);
    }
    expect((await execute(d, { code: 'print(1)', timeout_s: 60 })).status).toBe(200);
    const unknown = await execute(d, { code: 'print(1)', memory: 1 });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toBe('unknown body field: memory');
    expect((await execute(d, {})).body.error).toBe('missing required field: code');
  });

  it('405 on a wrong method; the routes are not on the public or internal listener', async () => {
    const r = await sbx(d, 'GET', '/v1/execute');
    expect(r.status).toBe(405);
    expect((await sbx(d, 'DELETE', '/v1/pool')).status).toBe(405);
    for (const base of [d.url, d.internalUrl]) {
      const res = await fetch(`${base}/v1/execute`, { method: 'POST', body: '{"code":"print(1)"}', headers: { 'content-type': 'application/json' } });
      expect(res.status).toBe(404);
      expect((await fetch(`${base}/v1/pool`)).status).toBe(404);
    }
    // And the sandbox listener serves nothing else.
    expect((await sbx(d, 'GET', '/healthz')).status).toBe(404);
  });

  it('the OpenAPI document lists the routes as served on the sandbox listener', async () => {
    const doc = (await (await fetch(`${d.url}/v1/openapi.json`)).json()) as any;
    for (const [path, method] of [['/v1/execute', 'post'], ['/v1/call', 'post'], ['/v1/pool', 'get']] as const) {
      const op = doc.paths[path][method];
      expect(op['x-listener']).toBe('sandbox');
      expect(op.security).toEqual([]);
      expect(op.servers[0].description).toMatch(/sandbox listener/);
    }
  });

  escapeAttempts(() => d);
});
