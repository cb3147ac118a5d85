import { execa } from 'execa';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cliSandbox } from '../helpers/cli.js';

interface ManifestFlag {
  char?: string;
  env?: string;
  required?: boolean;
  type: string;
}
const manifest = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'oclif.manifest.json'), 'utf8')) as {
  commands: Record<string, { pluginName?: string; flags: Record<string, ManifestFlag>; args: Record<string, { required?: boolean }> }>;
};
const ours = Object.entries(manifest.commands).filter(([, c]) => c.pluginName === 'platform');

/**
 * Commands that act on no project: every other command is project-scoped and takes -p/--project.
 * A new command is project-scoped unless it is added here with its reason.
 */
const NOT_PROJECT_SCOPED: Record<string, string> = {
  help: 'local help text',
  completion: 'prints a shell script',
  'auth:token': 'your own credential',
  'context:add': "its --project sets the new context's current project",
  init: 'writes a local folder',
  limits: 'platform-wide limits',
  login: 'signs in to a context',
  logout: 'signs out of a context',
  passwd: 'your own account',
  whoami: 'your own account',
  'context:list': 'local CLI configuration',
  'context:remove': 'local CLI configuration',
  'context:use': 'local CLI configuration',
  'daemon:logs': 'the local daemon process',
  'daemon:start': 'the local daemon process',
  'daemon:status': 'the local daemon process',
  'daemon:stop': 'the local daemon process',
  'invitations:accept': 'the invitation names its project',
  'invitations:show': 'the invitation names its project',
  'keys:create': 'personal API keys belong to the account',
  'keys:list': 'personal API keys belong to the account',
  'keys:revoke': 'personal API keys belong to the account',
  'projects:create': 'the project is the argument',
  'projects:delete': 'the project is the argument',
  'projects:list': 'lists projects',
  'projects:use': 'the project is the argument',
  'orgs:create': 'organizations hold projects',
  'orgs:delete': 'organizations hold projects',
  'orgs:list': 'organizations hold projects',
  'orgs:members:add': 'organizations hold projects',
  'orgs:members:list': 'organizations hold projects',
  'orgs:members:remove': 'organizations hold projects',
  'orgs:members:update': 'organizations hold projects',
  'sandbox:exec': 'the code sandbox is platform-wide (/v1/execute)',
  'sandbox:pool': 'the code sandbox is platform-wide (/v1/pool)',
  'server:backup': 'the whole server',
  'server:restore': 'the whole server',
  'server:start': 'the whole server',
  'users:create': 'platform accounts',
  'users:delete': 'platform accounts',
  'users:list': 'platform accounts',
  'users:reset-password': 'platform accounts',
  'users:update': 'platform accounts',
};

/** Destructive by name: the last word of the command. Reversible verbs (rollback, yank, unpublish, unbind, unset, rotate) ask nothing. */
const DESTRUCTIVE = /^(delete|delete-points|purge|remove|rm|revoke|reset|reset-password|restore|erase|empty|rewind|release)$/;
const NOT_DESTRUCTIVE: Record<string, string> = {
  'server:restore': 'restores only into an empty or missing state directory',
};
/** They look the organization up before asking, so they need a server; the TTY rule is the same. */
const ASKS_AFTER_LOOKUP = new Set(['orgs:delete', 'orgs:members:remove']);

const destructive = ours.filter(([id]) => DESTRUCTIVE.test(id.split(':').at(-1)!) && !NOT_DESTRUCTIVE[id]);

const cli = cliSandbox();
afterAll(() => cli.stop());

describe('flag conventions across every command', () => {
  it('every project-scoped command takes -p/--project from the one shared definition', () => {
    const missing: string[] = [];
    for (const [id, c] of ours) {
      const project = c.flags.project;
      if (project) expect(project.char, `${id} --project`).toBe('p');
      if (NOT_PROJECT_SCOPED[id]) continue;
      if (!project) missing.push(id);
      // `search` narrows a search across every project: no PLATFORM_PROJECT fallback there.
      else if (id !== 'search' && id !== 'context:add') expect(project.env, `${id} --project`).toBe('PLATFORM_PROJECT');
    }
    expect(missing).toEqual([]);
    // The exceptions are real commands (a renamed one must leave the list).
    for (const id of Object.keys(NOT_PROJECT_SCOPED)) expect(manifest.commands[id], id).toBeTruthy();
    expect(ours.filter(([, c]) => c.flags.project).length).toBeGreaterThan(120);
  });

  it('every destructive command takes -y/--yes', () => {
    expect(destructive.length).toBeGreaterThan(30);
    for (const [id, c] of destructive) expect(c.flags.yes?.char, `${id} --yes`).toBe('y');
  });

  it('without a terminal and without --yes, every destructive command refuses with exit 2 before touching anything', async () => {
    const queue = destructive.filter(([id]) => !ASKS_AFTER_LOOKUP.has(id));
    const results: { id: string; exitCode: number; stderr: string }[] = [];
    // Four at a time: the machine's two cores are shared with daemons of other test files.
    const worker = async () => {
      for (let next = queue.shift(); next; next = queue.shift()) {
        const [id, c] = next;
        const args = Object.values(c.args).filter((a) => a.required).map(() => 'x');
        const flags = Object.entries(c.flags).filter(([, f]) => f.required).flatMap(([name]) => [`--${name}`, '1']);
        const r = await cli.run([...id.split(':'), ...args, ...flags]);
        results.push({ id, exitCode: r.exitCode, stderr: r.stderr });
      }
    };
    await Promise.all([worker(), worker(), worker(), worker()]);
    expect(results.length).toBe(destructive.length - ASKS_AFTER_LOOKUP.size);
    for (const r of results) {
      expect(r.exitCode, `${r.id}: ${r.stderr}`).toBe(2);
      expect(r.stderr, r.id).toMatch(/needs an interactive terminal, but stdin is not a TTY/);
      expect(r.stderr, r.id).toMatch(/pass --yes/);
    }
    // Refused before any request: no daemon was started for them.
    expect((await cli.run(['daemon', 'status', '--json'])).json).toMatchObject({ running: false });
  }, 90_000);

  it('on a terminal the command asks: n cancels and changes nothing, y goes ahead', async () => {
    expect((await cli.run(['topics', 'create', 'doomed', '--json'])).exitCode).toBe(0);
    // `script` gives the command a pseudo-terminal; our stdin is typed into it.
    const onTty = (answer: string) =>
      execa('script', ['-qec', `node ${join(import.meta.dirname, '..', '..', 'bin', 'run.js')} topics delete doomed`, '/dev/null'], {
        env: cli.env,
        input: `${answer}\n`,
        reject: false,
        timeout: 30_000,
      });
    const no = await onTty('n');
    expect(no.stdout).toContain('delete topic doomed and its messages? [y/N]');
    expect(no.stdout).toContain('Error: cancelled');
    expect(no.exitCode).toBe(1);
    expect((await cli.run(['topics', 'get', 'doomed', '--json'])).exitCode).toBe(0);
    const yes = await onTty('y');
    expect(yes.exitCode, yes.stdout).toBe(0);
    const gone = await cli.run(['topics', 'get', 'doomed', '--json']);
    expect(gone.exitCode).toBe(1);
    expect(gone.json.status).toBe(404);
  }, 90_000);
});
