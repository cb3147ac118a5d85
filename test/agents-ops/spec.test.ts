import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { cast } from '../helpers/fixtures.js';
import { deployAgent } from '../knowledge/fixtures.js';

/** GET /v1/agents/{name}/spec: the deploy spec with secrets left out and secret-looking env values redacted. */
let d: TestDaemon;
let c: Awaited<ReturnType<typeof cast>>;
let q: string;

const ENV = {
  GREETING: 'hello',
  LOG_LEVEL: 'debug',
  OPENAI_API_KEY: 'plain-looking-value',
  DB_PASSWORD: 'hunter2',
  UPSTREAM: 'sk-abcdefghijklmnopqrstuvwx',
  DATABASE_URL: 'postgres://app:s3cret@db.internal:5432/app',
  PUBLIC_URL: 'https://example.test/path',
  GH: 'ghp_abcdefghijklmnopqrstuvwxyz0123456789',
  JWT_SAMPLE: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NSJ9.c2lnbmF0dXJlLXZhbHVl',
  TOKENIZER: 'bpe',
};

beforeAll(async () => {
  d = await startTestDaemon({ invokeAuthRequired: false });
  c = await cast(d);
  q = `?project=${c.project.slug}`;
  await deployAgent(d, c.member.token, 'spec', c.project.slug);
  const env = await d.api('PATCH', `/v1/agents/spec/env${q}`, { token: c.member.token, body: { set: ENV } });
  expect(env.status, env.text).toBe(200);
  const sec = await d.api('PUT', `/v1/agents/spec/secrets${q}`, { token: c.member.token, body: { STRIPE_KEY: 'sk_live_zzzzzzzzzzzzzzzzzzzz', OTHER: 'x' } });
  expect(sec.status, sec.text).toBe(200);
});
afterAll(async () => d?.close());

describe('GET /v1/agents/{name}/spec', () => {
  it('returns the deploy spec: secrets by key only, credential-looking env values redacted', async () => {
    const r = await d.api('GET', `/v1/agents/spec/spec${q}`, { token: c.member.token });
    expect(r.status, r.text).toBe(200);
    expect(r.body.agent).toBe('spec');
    expect(r.body.spec).toMatchObject({ name: 'spec', kind: 'function', framework: 'function', runtime: 'python', secrets: ['OTHER', 'STRIPE_KEY'] });
    expect(r.body.spec.env).toEqual({
      DATABASE_URL: '[redacted]',
      DB_PASSWORD: '[redacted]',
      GH: '[redacted]',
      GREETING: 'hello',
      JWT_SAMPLE: '[redacted]',
      LOG_LEVEL: 'debug',
      OPENAI_API_KEY: '[redacted]',
      PUBLIC_URL: 'https://example.test/path',
      TOKENIZER: 'bpe',
      UPSTREAM: '[redacted]',
    });
    expect(r.body.redacted).toEqual(['DATABASE_URL', 'DB_PASSWORD', 'GH', 'JWT_SAMPLE', 'OPENAI_API_KEY', 'UPSTREAM']);
    for (const v of ['hunter2', 's3cret', 'sk_live_', 'sk-abc', 'ghp_', 'plain-looking-value']) expect(r.text).not.toContain(v);
  });

  it('owner rights: the project admin reads it; outsiders and unknown agents 404; anonymous 401', async () => {
    expect((await d.api('GET', `/v1/agents/spec/spec${q}`, { token: c.admin.token })).status).toBe(200);
    const out = await d.api('GET', `/v1/agents/spec/spec${q}`, { token: c.outsider.token });
    expect(out.status).toBe(404);
    expect(out.body).toMatchObject({ error: expect.any(String), request_id: expect.any(String) });
    expect((await d.api('GET', `/v1/agents/nope/spec${q}`, { token: c.member.token })).status).toBe(404);
    expect((await d.api('GET', `/v1/agents/Bad/spec${q}`, { token: c.member.token })).status).toBe(400);
    expect((await d.api('GET', `/v1/agents/spec/spec${q}`)).status).toBe(401);
  });
});
