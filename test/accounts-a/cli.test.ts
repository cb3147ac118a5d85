import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { cliSandbox } from '../helpers/cli.js';

/** The account commands through the built binary against the daemon it spawns. */
// Each run is a fresh node process (about 0.7 s, several times that on a loaded machine).
vi.setConfig({ testTimeout: 180_000 });
const cli = cliSandbox();
afterAll(() => cli.stop());

beforeAll(async () => {
  const r = await cli.run(['daemon', 'start', '--json']);
  expect(r.exitCode, r.stderr).toBe(0);
});

describe('platform projects', () => {
  it('create, get, rename, use and delete, in text and JSON', async () => {
    const created = await cli.run(['projects', 'create', 'shop-api', '--name', 'Shop API', '--json']);
    expect(created.exitCode, created.stderr).toBe(0);
    expect(created.json.project).toMatchObject({ slug: 'shop-api', name: 'Shop API', your_role: 'admin' });
    const short = created.json.project.short;

    const get = await cli.run(['projects', 'get', 'shop-api']);
    expect(get.exitCode).toBe(0);
    expect(get.stdout).toMatch(/^slug\s+shop-api$/m);
    expect(get.stdout).toMatch(new RegExp(`^short\\s+${short}$`, 'm'));

    // Without a current project the local context falls back to "default".
    const def = await cli.run(['projects', 'get', '--json']);
    expect(def.json.slug).toBe('default');

    const use = await cli.run(['projects', 'use', 'shop-api']);
    expect(use.exitCode).toBe(0);
    expect(use.stdout).toContain('current project of context local: shop-api');
    expect((await cli.run(['projects', 'get', '--json'])).json.slug).toBe('shop-api');

    const renamed = await cli.run(['projects', 'rename', '--slug', 'storefront', '--json']);
    expect(renamed.exitCode, renamed.stderr).toBe(0);
    expect(renamed.json.project).toMatchObject({ slug: 'storefront', short });
    // The context followed the rename.
    expect((await cli.run(['projects', 'get', '--json'])).json.slug).toBe('storefront');

    const typo = await cli.run(['projects', 'use', 'nope']);
    expect(typo.exitCode).toBe(1);
    expect(typo.stderr).toMatch(/Error: project not found/);

    const noYes = await cli.run(['projects', 'delete', 'storefront']);
    expect(noYes.exitCode).toBe(2);
    expect(noYes.stderr).toMatch(/pass --yes/);
    const del = await cli.run(['projects', 'delete', 'storefront', '--yes']);
    expect(del.exitCode, del.stderr).toBe(0);
    expect(del.stdout).toContain('deleted project storefront');
    expect(del.stderr).toMatch(/no longer has a current project/);
  });

  it('API errors exit 1 with the message (and JSON under --json); usage errors exit 2', async () => {
    const r = await cli.run(['projects', 'delete', 'default', '--yes']);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/Error: the default project cannot be deleted/);
    expect(r.stderr).toMatch(/request id: req_/);
    const j = await cli.run(['projects', 'delete', 'default', '--yes', '--json']);
    expect(j.exitCode).toBe(1);
    expect(j.json).toMatchObject({ error: 'the default project cannot be deleted', status: 403 });
    expect((await cli.run(['projects', 'create'])).exitCode).toBe(2);
    expect((await cli.run(['projects', 'rename', 'default'])).exitCode).toBe(2);
  });
});

describe('platform users and members', () => {
  it('creates a user (temporary password shown), adds them to a project, updates and removes them', async () => {
    const u = await cli.run(['users', 'create', 'dev@example.test', '--json']);
    expect(u.exitCode, u.stderr).toBe(0);
    expect(u.json.user).toMatchObject({ email: 'dev@example.test', must_change_password: true });
    expect(u.json.temporary_password).toMatch(/^.{20}$/);
    const given = await cli.run(['users', 'create', 'given@example.test', '--password-stdin', '--json'], { input: 'Given-Passw0rd!\n' });
    expect(given.exitCode, given.stderr).toBe(0);
    expect(given.json.temporary_password).toBeUndefined();
    const weak = await cli.run(['users', 'create', 'weak@example.test', '--password-stdin'], { input: 'weak\n' });
    expect(weak.exitCode).toBe(1);
    expect(weak.stderr).toMatch(/at least 12 characters/);
    const human = await cli.run(['users', 'create', 'ops@example.test']);
    expect(human.stdout).toMatch(/^temporary_password\s+\S{20}$/m);
    expect(human.stderr).toMatch(/shown only now/);

    const list = await cli.run(['users', 'list']);
    expect(list.stdout.split('\n')[0]).toMatch(/^EMAIL\s+ROLE\s+EXTERNAL\s+MUST CHANGE PASSWORD\s+PROJECTS\s+AGENTS\s+ID$/);
    expect(list.stdout).toMatch(/^dev@example\.test\s+user\s+no\s+yes\s+-\s+0\s+/m);

    const add = await cli.run(['members', 'add', 'dev@example.test', '--project', 'default', '--role', 'admin']);
    expect(add.exitCode, add.stderr).toBe(0);
    expect(add.stderr).toMatch(/granted to the existing account/);
    const members = await cli.run(['members', 'list', '--json']);
    expect(members.json.members).toContainEqual(expect.objectContaining({ email: 'dev@example.test', role: 'admin', kind: 'user' }));
    const table = await cli.run(['members', 'list']);
    expect(table.stdout).toMatch(/^dev@example\.test\s+admin\s+user\s+no\s+-\s+-\s+[0-9a-f-]{36}$/m);

    const upd = await cli.run(['members', 'update', 'dev@example.test', '--role', 'member', '--json']);
    expect(upd.json).toMatchObject({ role: 'member' });
    const ghost = await cli.run(['members', 'add', 'ghost@example.test']);
    expect(ghost.exitCode).toBe(1);
    expect(ghost.stderr).toMatch(/invite them instead/);
    const rm = await cli.run(['members', 'remove', 'dev@example.test', '--yes', '--json']);
    expect(rm.json).toMatchObject({ deleted: true });

    const promote = await cli.run(['users', 'update', 'dev@example.test', '--role', 'admin', '--json']);
    expect(promote.json.user.role).toBe('admin');
    const reset = await cli.run(['users', 'reset-password', 'dev@example.test', '--json', '--yes']);
    expect(reset.json).toMatchObject({ email: 'dev@example.test', temporary_password: expect.any(String) });
    const del = await cli.run(['users', 'delete', 'dev@example.test', '--yes']);
    expect(del.exitCode).toBe(0);
    expect(del.stdout).toContain('deleted dev@example.test');
  });
});

describe('platform orgs', () => {
  it('create, list, members add/update/list/remove by slug, delete', async () => {
    const org = await cli.run(['orgs', 'create', 'acme', '--name', 'Acme', '--json']);
    expect(org.exitCode, org.stderr).toBe(0);
    expect(org.json).toMatchObject({ slug: 'acme', name: 'Acme', projects: 0, users: 0 });
    const list = await cli.run(['orgs', 'list']);
    expect(list.stdout).toMatch(/^acme\s+Acme\s+0\s+0\s+[0-9a-f-]{36}$/m);
    await cli.run(['users', 'create', 'lead@example.test']);
    const add = await cli.run(['orgs', 'members', 'add', 'acme', 'lead@example.test', '--role', 'admin']);
    expect(add.exitCode, add.stderr).toBe(0);
    expect(add.stderr).toMatch(/inherit admin/);
    const only = await cli.run(['orgs', 'members', 'update', 'acme', 'lead@example.test', '--role', 'member']);
    expect(only.exitCode).toBe(1);
    expect(only.stderr).toMatch(/only admin/);
    const members = await cli.run(['orgs', 'members', 'list', 'acme', '--json']);
    expect(members.json.members).toEqual([expect.objectContaining({ email: 'lead@example.test', role: 'admin' })]);
    // The only admin can't be removed; a full org can't be deleted.
    expect((await cli.run(['orgs', 'members', 'remove', 'acme', 'lead@example.test', '--yes'])).exitCode).toBe(1);
    const busy = await cli.run(['orgs', 'delete', 'acme', '--yes', '--json']);
    expect(busy.json).toMatchObject({ status: 409 });
    // A platform admin cannot make itself org admin (issue 17: that would reach every project's contents).
    const self = await cli.run(['orgs', 'members', 'add', 'acme', 'admin@example.test', '--role', 'admin']);
    expect(self.exitCode).toBe(1);
    expect(self.stderr).toMatch(/break-glass/);
    await cli.run(['users', 'create', 'second@example.test']);
    await cli.run(['orgs', 'members', 'add', 'acme', 'second@example.test', '--role', 'admin']);
    expect((await cli.run(['orgs', 'members', 'remove', 'acme', 'lead@example.test', '--yes'])).exitCode).toBe(0);
    const unknown = await cli.run(['orgs', 'delete', 'no-such-org', '--yes']);
    expect(unknown.exitCode).toBe(1);
    expect(unknown.stderr).toMatch(/no organization with slug no-such-org/);
  });
});

describe('platform break-glass, quota and limits', () => {
  it('quota and limits print tables and JSON', async () => {
    const q = await cli.run(['quota']);
    expect(q.exitCode, q.stderr).toBe(0);
    expect(q.stdout).toMatch(/^instances\s+0\s+50\s+count\s+agents 0, cache 0, mcp 0, serverless 0$/m);
    const l = await cli.run(['limits']);
    expect(l.stdout).toMatch(/^size\s+medium\s+1 cpu, 1Gi \(default\)$/m);
    expect((await cli.run(['limits', '--json'])).json.paging.page_size_max).toBe(200);
  });

  it('grant refuses a holder of a grant, succeeds for a metadata-only platform admin, and revoke ends it', async () => {
    // The bootstrap admin is org admin of default: it already holds a grant.
    const held = await cli.run(['break-glass', 'grant', '--project', 'default', '--reason', 'INC-1: investigate', '--json']);
    expect(held.exitCode).toBe(1);
    expect(held.json).toMatchObject({ status: 403 });
    const short = await cli.run(['break-glass', 'grant', '--project', 'default', '--reason', 'short']);
    expect(short.exitCode).toBe(1);
    expect(short.stderr).toMatch(/at least 12 characters/);
    // A project in another org, where the bootstrap admin is only a platform admin.
    const org = await cli.run(['orgs', 'create', 'other', '--json']);
    const p = await cli.run(['projects', 'create', 'elsewhere', '--org', 'other', '--json']);
    expect(p.exitCode, p.stderr).toBe(0);
    expect(p.json.note).toMatch(/not made a member/);
    expect(org.exitCode).toBe(0);
    const g = await cli.run(['break-glass', 'grant', '--project', 'elsewhere', '--reason', 'INC-2: agent stuck', '--minutes', '30']);
    expect(g.exitCode, g.stderr).toBe(0);
    expect(g.stdout).toMatch(/^reason\s+INC-2: agent stuck$/m);
    const list = await cli.run(['members', 'list', '--project', 'elsewhere']);
    expect(list.stdout).toMatch(/admin@example\.test\s+admin\s+user\s+no\s+until \S+\s+INC-2: agent stuck/);
    const r = await cli.run(['break-glass', 'revoke', '--project', 'elsewhere', '--json', '--yes']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.json).toMatchObject({ deleted: true });
    const after = await cli.run(['members', 'list', '--project', 'elsewhere', '--json']);
    expect(after.json.members[0]).toMatchObject({ break_glass: true, expired: true });
  });
});
