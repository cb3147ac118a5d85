import { execFileSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { cliSandbox } from '../helpers/cli.js';

// `platform gateway` through the real CLI and a spawned daemon: endpoints, keys, domains, the
// one-request test, --json everywhere; afterwards no secret in the state directory or daemon log.
const sb = cliSandbox();
afterAll(async () => sb.stop());
const secrets: string[] = [];

describe('platform gateway', { timeout: 60_000 }, () => {
  it('creates, keys, publishes and tests an apikey endpoint', async () => {
    const c = await sb.run(['gateway', 'endpoints', 'create', 'search', '--target', 'vectordb', '--auth', 'apikey', '--rate', '100/minute', '--rate-key', 'api_key', '--allow', '127.0.0.0/8', '--allow', '::1/128', '--json']);
    expect(c.exitCode, c.stderr + c.stdout).toBe(0);
    expect(c.json).toMatchObject({ name: 'search', published: false, state: 'unpublished', auth: { mode: 'apikey' }, rate_limit: { requests: 100, unit: 'minute', key: 'api_key' }, ip_allowlist: ['127.0.0.0/8', '0:0:0:0:0:0:0:1/128'] });

    const early = await sb.run(['gateway', 'endpoints', 'publish', 'search']);
    expect(early.exitCode).toBe(1);
    expect(early.stderr).toMatch(/no live key/);
    expect(early.stderr).toMatch(/gateway keys create search/);

    const k = await sb.run(['gateway', 'keys', 'create', 'search', '--note', 'ci', '--json']);
    expect(k.exitCode, k.stderr).toBe(0);
    expect(k.json.secret).toMatch(/^gk_secret_/);
    secrets.push(k.json.secret);
    const human = await sb.run(['gateway', 'keys', 'create', 'search', '--note', 'human']);
    const shown = /gk_secret_\S+/.exec(human.stdout)?.[0];
    expect(shown).toBeTruthy();
    secrets.push(shown!);

    expect((await sb.run(['gateway', 'endpoints', 'publish', 'search', '--json'])).json).toMatchObject({ published: true, state: 'ready' });

    const ok = await sb.run(['gateway', 'test', 'search', '--key', k.json.secret, '--json']);
    expect(ok.exitCode, ok.stderr + ok.stdout).toBe(0);
    expect(ok.json).toMatchObject({ status: 200, decision: expect.stringMatching(/endpoint=search; auth=apikey; caller=key /), rate_limit: { limit: '100', remaining: '99' } });

    const refused = await sb.run(['gateway', 'test', 'search']);
    expect(refused.exitCode).toBe(1);
    expect(refused.stdout).toMatch(/401/);
    expect(refused.stdout).toMatch(/needs an API key/);
  });

  it('lists, gets, rotates, revokes and updates', async () => {
    const list = await sb.run(['gateway', 'endpoints', 'list']);
    expect(list.stdout).toMatch(/search\s+ready\s+vectordb\s+apikey\s+http:\/\/search-[a-z0-9]{6}\.gw\.localhost:\d+/);
    const keys = (await sb.run(['gateway', 'keys', 'list', 'search', '--json'])).json.keys;
    expect(keys).toHaveLength(2);
    const rot = await sb.run(['gateway', 'keys', 'rotate', 'search', keys[0].key_id, '--json']);
    expect(rot.exitCode, rot.stderr).toBe(0);
    secrets.push(rot.json.secret);
    // The old secret still works during the overlap, the new one at once.
    expect((await sb.run(['gateway', 'test', 'search', '--key', secrets[0]!, '--json'])).json.status).toBe(200);
    expect((await sb.run(['gateway', 'test', 'search', '--key', rot.json.secret, '--json'])).json.status).toBe(200);
    const table = await sb.run(['gateway', 'keys', 'list', 'search']);
    expect(table.stdout).toMatch(/live \(superseded\)/);
    expect((await sb.run(['gateway', 'keys', 'revoke', 'search', rot.json.key.key_id, '--yes'])).exitCode).toBe(0);
    const gone = await sb.run(['gateway', 'test', 'search', '--key', rot.json.secret, '--json']);
    expect(gone.exitCode).toBe(1);
    expect(gone.json).toMatchObject({ status: 401, error: expect.stringMatching(/revoked/) });

    const up = await sb.run(['gateway', 'endpoints', 'update', 'search', '--rate', 'none', '--allow-any', '--json']);
    expect(up.exitCode, up.stderr).toBe(0);
    expect(up.json.rate_limit).toBeUndefined();
    expect(up.json.ip_allowlist).toEqual([]);
    const got = await sb.run(['gateway', 'endpoints', 'get', 'search']);
    expect(got.stdout).toMatch(/rate_limit\s+none/);
    expect((await sb.run(['gateway', 'endpoints', 'create', 'bad', '--target', 'mainframe/x'])).exitCode).toBe(2);
  });

  it('claims, lists and releases a domain; unpublishes and deletes', async () => {
    const claim = await sb.run(['gateway', 'domains', 'claim', 'api.example.test', '--json']);
    expect(claim.exitCode, claim.stderr).toBe(0);
    expect(claim.json).toMatchObject({ hostname: 'api.example.test', verified: false, record: { type: 'CNAME', value: expect.stringMatching(/^[a-z0-9]{6}\.gw\.localhost$/) } });
    expect((await sb.run(['gateway', 'domains', 'list'])).stdout).toMatch(/api\.example\.test\s+(false|no)/);
    expect((await sb.run(['gateway', 'domains', 'release', 'api.example.test', '--yes'])).exitCode).toBe(0);
    expect((await sb.run(['gateway', 'endpoints', 'unpublish', 'search', '--json'])).json.published).toBe(false);
    expect((await sb.run(['gateway', 'endpoints', 'delete', 'search', '--yes'])).exitCode).toBe(0);
    const again = await sb.run(['gateway', 'endpoints', 'delete', 'search', '--yes', '--json']);
    expect(again.exitCode).toBe(1);
    expect(again.json).toMatchObject({ status: 404 });
  });

  it('no key secret in clear in the state directory or the daemon log', () => {
    expect(secrets).toHaveLength(3);
    const files = execFileSync('sh', ['-c', 'find "$0" -type f | head -200', sb.home]).toString();
    expect(files).toMatch(/\.log/);
    for (const s of [...secrets, ...secrets.map((x) => x.split('_').pop()!)]) {
      const hits = execFileSync('sh', ['-c', 'grep -rlaF -- "$0" "$1" || true', s, sb.home]).toString().trim();
      expect(hits, `found in ${hits}`).toBe('');
    }
  });
});
