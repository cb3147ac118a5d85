import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliSandbox } from '../helpers/cli.js';

const cli = cliSandbox();
afterAll(() => cli.stop());
beforeAll(async () => {
  const r = await cli.run(['daemon', 'start', '--json']);
  expect(r.exitCode, r.stderr).toBe(0);
});

describe('platform service-accounts', () => {
  let secret: string;
  let keyId: string;

  it('create shows the account; --json returns the API body', async () => {
    const human = await cli.run(['service-accounts', 'create', 'ci-deployer', '--display-name', 'GitHub Actions', '--role', 'admin']);
    expect(human.exitCode, human.stderr).toBe(0);
    expect(human.stdout).toMatch(/^name\s+ci-deployer$/m);
    expect(human.stdout).toMatch(/^email\s+ci-deployer@[a-z0-9]{6}\.iam\.platform\.internal$/m);
    expect(human.stdout).toMatch(/^role\s+admin$/m);
    const json = await cli.run(['service-accounts', 'create', 'reporter', '--json']);
    expect(json.exitCode, json.stderr).toBe(0);
    expect(json.json.service_account).toMatchObject({ name: 'reporter', role: 'member', display_name: 'reporter', disabled: false });
    const bad = await cli.run(['service-accounts', 'create', 'Bad_Name', '--json']);
    expect(bad.exitCode).toBe(1);
    expect(bad.json).toMatchObject({ status: 400, error: expect.stringMatching(/invalid field name/) });
  });

  it('list shows a table and JSON', async () => {
    const human = await cli.run(['service-accounts', 'list']);
    expect(human.exitCode, human.stderr).toBe(0);
    expect(human.stdout.split('\n')[0]).toMatch(/^NAME\s+ROLE\s+EMAIL\s+DISPLAY NAME\s+DISABLED\s+CREATED$/);
    expect(human.stdout).toMatch(/^ci-deployer\s+admin\s+\S+\s+GitHub Actions\s+no\s+/m);
    const json = await cli.run(['service-accounts', 'list', '--project', 'default', '--json']);
    expect(json.json.service_accounts.map((s: any) => s.name)).toEqual(['ci-deployer', 'reporter']);
  });

  it('keys create prints only the secret on stdout; the key signs in as the account', async () => {
    const r = await cli.run(['service-accounts', 'keys', 'create', 'ci-deployer', 'gha']);
    expect(r.exitCode, r.stderr).toBe(0);
    secret = r.stdout.trim();
    expect(secret).toMatch(/^svc_[a-z0-9]{12}_[A-Za-z0-9]{40}$/);
    expect(r.stderr).toMatch(/shown only once/);
    keyId = secret.split('_')[1]!;
    const me = await cli.run(['whoami', '--json'], { env: { PLATFORM_TOKEN: secret } });
    expect(me.exitCode, me.stderr).toBe(0);
    expect(me.json).toMatchObject({ email: expect.stringMatching(/^ci-deployer@/), project_slug: 'default' });
    const json = await cli.run(['service-accounts', 'keys', 'create', 'ci-deployer', 'nightly', '--expires-in-days', '90', '--json']);
    expect(json.json).toMatchObject({ key: { display_name: 'nightly', kind: 'service_account', expires_at: expect.any(String) }, secret: expect.stringMatching(/^svc_/) });
  });

  it('a service-account key cannot manage accounts or keys: exit 1 with 403', async () => {
    const r = await cli.run(['service-accounts', 'create', 'sneaky', '--json'], { env: { PLATFORM_TOKEN: secret } });
    expect(r.exitCode).toBe(1);
    expect(r.json.status).toBe(403);
    const k = await cli.run(['keys', 'create', 'mine'], { env: { PLATFORM_TOKEN: secret } });
    expect(k.exitCode).toBe(1);
    expect(k.stderr).toMatch(/machine credentials/);
  });

  it('keys list is newest first and never shows a secret; revoke stops the key at once', async () => {
    const human = await cli.run(['service-accounts', 'keys', 'list', 'ci-deployer']);
    expect(human.exitCode, human.stderr).toBe(0);
    expect(human.stdout.split('\n')[0]).toMatch(/^KEY ID\s+NAME\s+STATE\s+CREATED\s+EXPIRES\s+LAST USED$/);
    expect(human.stdout).not.toContain(secret.split('_')[2]);
    const json = await cli.run(['service-accounts', 'keys', 'list', 'ci-deployer', '--json']);
    expect(json.json.keys.map((k: any) => k.display_name)).toEqual(['nightly', 'gha']);
    const rv = await cli.run(['service-accounts', 'keys', 'revoke', 'ci-deployer', keyId, '--yes']);
    expect(rv.exitCode, rv.stderr).toBe(0);
    expect(rv.stdout).toMatch(new RegExp(`^revoked ${keyId}: the key stopped working immediately$`, 'm'));
    const me = await cli.run(['whoami', '--json'], { env: { PLATFORM_TOKEN: secret } });
    expect(me.exitCode).toBe(1);
    expect(me.json.status).toBe(401);
    const other = await cli.run(['service-accounts', 'keys', 'revoke', 'reporter', keyId, '--json', '--yes']);
    expect(other.exitCode).toBe(1);
    expect(other.json).toMatchObject({ status: 404, error: 'key not found' });
  });

  it('delete revokes the keys and keeps the name reserved', async () => {
    const r = await cli.run(['service-accounts', 'delete', 'ci-deployer', '--yes']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^deleted ci-deployer; revoked 1 key\(s\)$/m);
    const again = await cli.run(['service-accounts', 'create', 'ci-deployer']);
    expect(again.exitCode).toBe(1);
    expect(again.stderr).toMatch(/reserved permanently/);
    expect((await cli.run(['service-accounts', 'delete', '--yes'])).exitCode).toBe(2);
  });
});

describe('platform keys (personal)', () => {
  it('create, list, revoke, with and without --json', async () => {
    const created = await cli.run(['keys', 'create', 'laptop', '--expires-in-days', '30', '--json']);
    expect(created.exitCode, created.stderr).toBe(0);
    expect(created.json).toMatchObject({ key: { display_name: 'laptop', kind: 'personal', live: true }, secret: expect.stringMatching(/^svc_/) });
    const human = await cli.run(['keys', 'create', 'desktop']);
    expect(human.stdout.trim()).toMatch(/^svc_[a-z0-9]{12}_[A-Za-z0-9]{40}$/);
    const list = await cli.run(['keys', 'list']);
    expect(list.exitCode).toBe(0);
    expect(list.stdout).toMatch(/^[a-z0-9]{12}\s+laptop\s+live\s+\S+\s+\S+Z\s+-$/m);
    expect(list.stdout).toMatch(/^[a-z0-9]{12}\s+desktop\s+live\s+\S+\s+never\s+-$/m);
    expect(list.stdout).not.toContain(created.json.secret.split('_')[2]);
    const rv = await cli.run(['keys', 'revoke', created.json.key.key_id, '--json', '--yes']);
    expect(rv.json).toMatchObject({ revoked: created.json.key.key_id });
    const listed = await cli.run(['keys', 'list', '--json']);
    expect(listed.json.keys.find((k: any) => k.key_id === created.json.key.key_id).state).toBe('revoked');
    const missing = await cli.run(['keys', 'revoke', 'zzzzzzzzzzzz', '--yes']);
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toMatch(/Error: key not found/);
    expect((await cli.run(['keys', 'create', 'x', '--expires-in-days', '5000'])).exitCode).toBe(2);
  });
});

describe('platform audit', () => {
  it('shows the project log as a table and JSON, newest first, paged', async () => {
    const human = await cli.run(['audit']);
    expect(human.exitCode, human.stderr).toBe(0);
    expect(human.stdout.split('\n')[0]).toMatch(/^TIME\s+ACTOR\s+ACTION\s+TARGET\s+DETAILS$/);
    expect(human.stdout).toMatch(/admin@example\.test\s+service_account\.delete\s+ci-deployer@/);
    const json = await cli.run(['audit', '--project', 'default', '--json']);
    const actions = json.json.entries.map((e: any) => e.action);
    expect(actions.slice(0, 1)).toEqual(['service_account.delete']);
    expect(actions).toContain('service_account.create');
    expect(actions).toContain('key.revoke');
    const paged = await cli.run(['audit', '--page-size', '2', '--json']);
    expect(paged.json.entries).toHaveLength(2);
    const next = await cli.run(['audit', '--page-size', '2', '--page-token', paged.json.next_page_token, '--json']);
    expect(next.json.entries[0].id).not.toBe(paged.json.entries[0].id);
    expect(next.json.entries[0].id).toBe(json.json.entries[2].id);
  });
});

describe('platform passwd', () => {
  it('needs a TTY or --stdin; a wrong current password is exit 1', async () => {
    const r = await cli.run(['passwd']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/not a TTY/);
    const wrong = await cli.run(['passwd', '--stdin', '--json'], { input: 'Not-The-Password-1\nNew-Admin-Pass-99\n' });
    expect(wrong.exitCode).toBe(1);
    expect(wrong.json).toMatchObject({ status: 401, error: 'current password incorrect' });
    expect((await cli.run(['passwd', '--stdin'], { input: 'only-one-line' })).exitCode).toBe(2);
  });

  it('changes the bootstrap admin password; the local context keeps its API key, so automatic sign-in keeps working', async () => {
    const r = await cli.run(['passwd', '--stdin', '--json'], { input: 'Admin-Password-123\nNew-Admin-Pass-99\n' });
    expect(r.exitCode, r.stderr).toBe(0);
    // The local context signed in with a personal API key at first start: a password change leaves it.
    expect(r.json).toMatchObject({ email: 'admin@example.test', stored_in: 'not-stored', must_change_password: false });
    expect(r.json.local_admin_updated).toBeUndefined();
    expect(existsSync(join(cli.home, 'keys', 'admin.json'))).toBe(false);
    expect((await cli.run(['whoami', '--json'])).json.email).toBe('admin@example.test');
    const stored = readFileSync(join(cli.home, 'credentials.json'), 'utf8');
    expect(stored).toMatch(/"token": "svc_/);
    expect(stored).not.toContain('New-Admin-Pass-99');
    // Forget the stored key: PLATFORM_ADMIN_PASSWORD (the sandbox's, now stale) no longer signs in.
    rmSync(join(cli.home, 'credentials.json'), { force: true });
    const stale = await cli.run(['whoami', '--json']);
    expect(stale.exitCode).toBe(1);
    expect(stale.stdout + stale.stderr).toMatch(/automatic sign-in to the local daemon with PLATFORM_ADMIN_PASSWORD failed/);
    const me = await cli.run(['whoami', '--json'], { env: { PLATFORM_ADMIN_PASSWORD: 'New-Admin-Pass-99' } });
    expect(me.exitCode, me.stderr).toBe(0);
    expect(me.json.email).toBe('admin@example.test');
    expect(statSync(join(cli.home, 'credentials.json')).mode & 0o777).toBe(0o600);
    const old = await cli.run(['login', '--email', 'admin@example.test', '--password-stdin'], { input: 'Admin-Password-123' });
    expect(old.exitCode).toBe(1);
    const human = await cli.run(['passwd', '--stdin'], { input: 'New-Admin-Pass-99\nThird-Admin-Pass-7\n' });
    expect(human.exitCode, human.stderr).toBe(0);
    expect(human.stdout).toMatch(/^password changed for admin@example\.test$/m);
  });
});
