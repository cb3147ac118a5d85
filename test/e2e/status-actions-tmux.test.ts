import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliSandbox } from '../helpers/cli.js';
import { tmuxTerminal } from '../helpers/tmux.js';

/**
 * The dashboard's actions in a real terminal against the daemon the CLI spawns: each asks y/N on
 * the footer and goes through the API (checked with the CLI afterwards). docs/decisions/status.md.
 */
const sb = cliSandbox();
const work = mkdtempSync(join(tmpdir(), 'platform-status-actions-'));
const term = tmuxTerminal('platform-status-actions');
const { keys, until } = term;

beforeAll(async () => {
  const dir = join(work, 'hello');
  expect((await sb.run(['init', dir, '--template', 'function-python'])).exitCode).toBe(0);
  const [deploy, service] = await Promise.all([sb.run(['deploy', dir]), sb.run(['services', 'create', 'web', '--image', 'platform-none:local', '--min-scale', '1'])]);
  expect(deploy.exitCode, deploy.stderr).toBe(0);
  expect(service.exitCode, service.stderr).toBe(0);
  term.start(['status', '--interval', '1'], { ...sb.env, NO_COLOR: '' });
  await until(/hello +ready +function hello-00001/, 'the first frame');
}, 120_000);

afterAll(async () => {
  term.close();
  await sb.stop();
  rmSync(work, { recursive: true, force: true });
});

describe('status actions (tmux)', { timeout: 60_000 }, () => {
  it('redeploys the function after y, then rolls it back to the previous revision', async () => {
    keys('r');
    await until('redeploy function hello from its stored source? [y/N]', 'the confirmation line');
    keys('y');
    await until(/function hello: redeploy started \(build [0-9a-f]{8}\)/, 'the redeploy result');
    await until(/hello +ready +function hello-00002 /, 'the new revision serving', 45_000);

    keys('b');
    await until('roll function hello back to its previous ready revision? [y/N]', 'the confirmation line');
    keys('y');
    await until('hello: all requests go to hello-00001', 'the rollback result');
    const traffic = await sb.run(['agents', 'traffic', 'hello', '--json']);
    expect(traffic.json.traffic).toEqual([{ revision_name: 'hello-00001', percent: 100 }]);
  });

  it('a service that cannot start shows why; z scales it to zero after y, not after n', async () => {
    keys('2');
    // Its real state and the reason, not an address that answers nothing.
    await until(/> web +not_ready +revision web-00001 is not ready/, 'the failing service with its reason');
    keys('z');
    await until('let service web scale to zero (min_scale 0)? [y/N]', 'the confirmation line');
    keys('n');
    await until('scale to zero: cancelled', 'the cancelled action');
    expect((await sb.run(['services', 'get', 'web', '--json'])).json.scaling.min_scale).toBe(1);
    keys('z');
    await until('[y/N]', 'the confirmation line again');
    keys('y');
    await until('web: min_scale 0 (was 1)', 'the result');
    expect((await sb.run(['services', 'get', 'web', '--json'])).json.scaling.min_scale).toBe(0);
    keys('q');
    await until(/^exited 0\nprompt\$/m, 'the process to exit');
    expect(term.screenState()).toBe('0 1');
  });
});
