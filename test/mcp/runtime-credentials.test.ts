import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkloadKey } from '../../src/daemon/services/auth/keys.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { cast } from '../helpers/fixtures.js';
import { callBody, removeDir, serve, versionDir, type Served } from './runtime-helpers.js';

/**
 * Declared credential keys are read per call with the workload key the daemon hands a deployed
 * server (SVC_PROJECT_KEY, minted here as lifecycle.ts does with createWorkloadKey): a project
 * read token from secrets:issue-token, then the store's read path. A real daemon serves both.
 */
const VALUE = 'sk-live-Zq8v-' + 'c0ffee'.repeat(6);

let d: TestDaemon;
let dir: string;
let s: Served;
beforeAll(async () => {
  d = await startTestDaemon();
  const c = await cast(d);
  const put = await d.api('POST', `/v1/projects/${c.project.id}/secrets`, { token: c.member.token, body: { name: 'weather-api-key', value: VALUE } });
  expect(put.status).toBe(201);
  dir = await versionDir({
    forecast: {
      source: [
        'from platform_mcp import tool, credentials',
        '',
        '@tool',
        'def forecast(city: str, credentials: dict) -> dict:',
        '    """Uses the injected parameter and platform_mcp.credentials()."""',
        '    key = credentials["weather-api-key"]',
        '    assert credentials == __import__("platform_mcp").credentials()',
        '    return {"city": city, "key_length": len(key), "key_prefix": key[:8]}',
        '',
      ].join('\n'),
      credential_keys: ['weather-api-key'],
    },
    needs_missing: {
      source: '@tool\ndef needs_missing():\n    return "never"\n',
      credential_keys: ['weather-api-key', 'not-created-yet'],
    },
    sneaky: {
      source: [
        'import os',
        '',
        '@tool',
        'def sneaky():',
        '    """A tool without declared keys cannot read secrets with the project key."""',
        '    from platform_secrets import get_secret, SecretError',
        '    try:',
        '        return get_secret("weather-api-key")',
        '    except SecretError as exc:',
        '        return "refused: %s" % exc',
        '',
      ].join('\n'),
    },
  });
  s = await serve(dir, {
    SVC_API_URL: d.url,
    SVC_PROJECT_ID: c.project.id,
    SVC_PROJECT_KEY: createWorkloadKey(d.db, d.app.ctx.clock, c.project.id, 'mcp-weather'),
  });
});
afterAll(async () => {
  await s?.stop();
  if (dir) removeDir(dir);
  await d?.close();
});

describe('credential keys', () => {
  it('a tool reads its declared secret, injected and through platform_mcp.credentials()', async () => {
    const r = await s.post(callBody('forecast', { city: 'Oslo' }));
    expect(r.json.result.isError).toBe(false);
    expect(r.json.result.structuredContent).toEqual({ city: 'Oslo', key_length: VALUE.length, key_prefix: VALUE.slice(0, 8) });
    // Read through a project token minted with the workload key.
    const audit = d.db.prepare(`SELECT details FROM acct_audit WHERE action = 'project.secret.issue-token' AND actor LIKE '%mcp-weather%'`).all();
    expect(audit.length).toBeGreaterThan(0);
  });

  it('a missing secret fails that call with a tool error naming the key; the server keeps serving', async () => {
    const r = await s.post(callBody('needs_missing'));
    expect(r.status).toBe(200);
    expect(r.json.result).toEqual({ isError: true, content: [{ type: 'text', text: 'credential not-created-yet: secret not-created-yet not found in this project' }] });
    expect((await s.post(callBody('forecast', { city: 'Bergen' }))).json.result.isError).toBe(false);
  });

  it('tool code does not get the project key: its own platform_secrets finds none', async () => {
    const r = await s.post(callBody('sneaky'));
    expect(r.json.result.content[0].text).toMatch(/^refused: .*SVC_PROJECT_KEY missing/);
  });

  it('the value appears in no output of the runtime and no file of the version', async () => {
    await s.post(callBody('forecast', { city: 'Tromsø' }));
    expect(s.output()).not.toContain(VALUE);
    const files = (p: string): string[] => readdirSync(p).flatMap((f) => (statSync(join(p, f)).isDirectory() ? files(join(p, f)) : [join(p, f)]));
    for (const f of files(dir)) expect(readFileSync(f, 'utf8'), f).not.toContain(VALUE);
  });
});
