import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliSandbox } from '../helpers/cli.js';

const cli = cliSandbox();
afterAll(() => cli.stop());
let url: string;
beforeAll(async () => {
  const r = await cli.run(['daemon', 'start', '--json']);
  expect(r.exitCode, r.stderr).toBe(0);
  url = r.json.url;
});

describe('platform invitations', () => {
  let token: string;
  let id: string;

  it('create prints the one-time token and the accept link; --json returns the API body', async () => {
    const json = await cli.run(['invitations', 'create', 'Newcomer@Example.test', '--role', 'admin', '--json']);
    expect(json.exitCode, json.stderr).toBe(0);
    expect(json.json.invitation).toMatchObject({ email: 'newcomer@example.test', role: 'admin', state: 'open' });
    token = json.json.invitation.token;
    id = json.json.invitation.id;
    expect(json.json.invitation.accept_url).toBe(`/invite/${token}`);
    const human = await cli.run(['invitations', 'create', 'second@example.test']);
    expect(human.exitCode, human.stderr).toBe(0);
    expect(human.stdout).toMatch(/^email\s+second@example\.test$/m);
    expect(human.stdout).toMatch(new RegExp(`^accept_url\\s+${url.replace(/[.:/]/g, '\\$&')}/invite/inv_[A-Za-z0-9]{40}$`, 'm'));
    expect(human.stderr).toMatch(/shown only once/);
  });

  it('create for an existing account grants membership at once', async () => {
    // The bootstrap admin administers the project through its org, without a membership row.
    const r = await cli.run(['invitations', 'create', 'admin@example.test']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^admin@example\.test already has an account: granted member on the project$/m);
    const again = await cli.run(['invitations', 'create', 'admin@example.test', '--json']);
    expect(again.exitCode).toBe(1);
    expect(again.json).toMatchObject({ status: 409, error: 'already a member of this project', request_id: expect.stringMatching(/^req_/) });
  });

  it('list shows a table and JSON without tokens', async () => {
    const human = await cli.run(['invitations', 'list']);
    expect(human.exitCode, human.stderr).toBe(0);
    expect(human.stdout.split('\n')[0]).toMatch(/^EMAIL\s+ROLE\s+STATE\s+EXPIRES\s+INVITED BY\s+ID$/);
    expect(human.stdout).toMatch(/^newcomer@example\.test\s+admin\s+open\s+/m);
    expect(human.stdout).not.toContain(token);
    const json = await cli.run(['invitations', 'list', '--project', 'default', '--json']);
    expect(json.json.invitations.map((i: any) => i.email)).toEqual(['second@example.test', 'newcomer@example.test']);
  });

  it('show previews an invitation without signing in, from a token or a link', async () => {
    const json = await cli.run(['invitations', 'show', `${url}/invite/${token}`, '--json']);
    expect(json.exitCode, json.stderr).toBe(0);
    expect(json.json).toMatchObject({ project_slug: 'default', email: 'newcomer@example.test', role: 'admin', account_exists: false });
    const human = await cli.run(['invitations', 'show', token]);
    expect(human.stdout).toMatch(/^project\s+Default project \(default\)$/m);
    expect(human.stdout).toMatch(/^account_exists\s+no$/m);
  });

  it('accept needs a password source when no account exists (no TTY: exit 2)', async () => {
    const r = await cli.run(['invitations', 'accept', token]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/not a TTY/);
    const weak = await cli.run(['invitations', 'accept', token, '--password-stdin', '--json'], { input: 'weakpassword\n' });
    expect(weak.exitCode).toBe(1);
    expect(weak.json).toMatchObject({ status: 400, error: expect.stringMatching(/at least 3 of/) });
  });

  it('accept with --password-stdin creates the account; a second accept fails with 410', async () => {
    const r = await cli.run(['invitations', 'accept', `/invite/${token}`, '--password-stdin', '--json'], { input: 'Newcomer-Pass-1\n' });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.json).toMatchObject({ accepted: true, role: 'admin', email: 'newcomer@example.test' });
    const login = await fetch(`${url}/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'newcomer@example.test', password: 'Newcomer-Pass-1' }) });
    expect(login.status).toBe(200);
    const again = await cli.run(['invitations', 'accept', token, '--password-stdin'], { input: 'Newcomer-Pass-1\n' });
    expect(again.exitCode).toBe(1);
    expect(again.stderr).toMatch(/Error: invitation already used/);
    expect(again.stderr).toMatch(/request id: req_/);
    const human = await cli.run(['invitations', 'list']);
    expect(human.stdout).toMatch(/^newcomer@example\.test\s+admin\s+accepted\s+/m);
    expect(id).toBeTruthy();
  });

  it('revoke revokes; an unknown id is exit 1 with the envelope', async () => {
    const list = await cli.run(['invitations', 'list', '--json']);
    const open = list.json.invitations.find((i: any) => i.state === 'open');
    const r = await cli.run(['invitations', 'revoke', open.id, '--yes']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/revoked the invitation of second@example\.test/);
    const missing = await cli.run(['invitations', 'revoke', '00000000-0000-4000-8000-000000000000', '--json', '--yes']);
    expect(missing.exitCode).toBe(1);
    expect(missing.json).toMatchObject({ status: 404, error: 'invitation not found' });
  });

  it('usage errors exit 2', async () => {
    expect((await cli.run(['invitations', 'create'])).exitCode).toBe(2);
    expect((await cli.run(['invitations', 'create', 'x@example.test', '--role', 'owner'])).exitCode).toBe(2);
    const help = await cli.run(['invitations', 'accept', '--help']);
    expect(help.exitCode).toBe(0);
    expect(help.stdout).toMatch(/--password-stdin/);
    expect(help.stdout).toMatch(/EXAMPLES/);
  });
});
