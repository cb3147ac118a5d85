import { afterAll, describe, expect, it } from 'vitest';
import { cliSandbox } from '../helpers/cli.js';

const cli = cliSandbox();
afterAll(() => cli.stop());

describe('one word for each thing, and commands instead of HTTP routes', () => {
  it('cache commands say cache in --json, not the API word memorystore', async () => {
    const list = await cli.run(['cache', 'list', '--json']);
    expect(list.exitCode, list.stderr).toBe(0);
    expect(list.json).toEqual({ caches: [] });
    const missing = await cli.run(['cache', 'get', 'nothing-here', '--json']);
    expect(missing.exitCode).toBe(1);
    expect(missing.json).toMatchObject({ status: 404, error: 'cache nothing-here not found' });
  });

  it('an API hint that names a route reaches a person as the command that does it', async () => {
    const r = await cli.run(['members', 'add', 'nobody@example.test', '--json']);
    expect(r.exitCode).toBe(1);
    expect(r.json.status).toBe(404);
    expect(r.json.error).toBe('no account for nobody@example.test: invite them instead (`platform invitations create EMAIL -p default`)');
    expect(JSON.stringify(r.json)).not.toMatch(/\/v1\//);
  });

  it('project secrets and an agent’s own secrets say how they differ', async () => {
    const [project, agent] = await Promise.all([cli.run(['secrets', 'list', '--help']), cli.run(['agents', 'secrets', 'list', '--help'])]);
    expect(project.stdout.split('\n')[0]).toContain('`platform agents secrets list`');
    expect(agent.stdout.split('\n')[0]).toContain('`platform secrets list`');
  });
});
