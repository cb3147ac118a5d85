import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cliSandbox } from '../helpers/cli.js';
import { archive, HELLO_PY } from '../agents/helpers.js';

/**
 * Issue 16 §1: without bubblewrap the daemon says so at start and in `daemon status`, and the
 * process driver refuses to run workloads; `daemon start --isolation none` is the explicit
 * opt-out. PLATFORM_BWRAP naming a missing file stands in for a machine without bubblewrap.
 */
const cli = cliSandbox({ PLATFORM_BWRAP: '/nonexistent/bwrap', PLATFORM_WORKLOAD_PORT_MIN: '35000', PLATFORM_WORKLOAD_PORT_MAX: '35999' });
afterAll(() => cli.stop());

async function deploy(url: string, name: string): Promise<any> {
  const login = await fetch(`${url}/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'admin@example.test', password: 'Admin-Password-123' }) });
  const { token } = (await login.json()) as { token: string };
  const form = new FormData();
  form.append('name', name);
  form.append('framework', 'function');
  form.append('runtime', 'python');
  form.append('code', new Blob([new Uint8Array(archive({ 'main.py': HELLO_PY }))]), 'code.tar.gz');
  expect((await fetch(`${url}/v1/agents`, { method: 'POST', body: form, headers: { authorization: `Bearer ${token}` } })).status).toBe(202);
  const deadline = Date.now() + 60_000;
  let view: any;
  while (Date.now() < deadline) {
    view = await (await fetch(`${url}/v1/agents/${name}`, { headers: { authorization: `Bearer ${token}` } })).json();
    if (view.state === 'ready' || view.state === 'failed') return view;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`agent ${name} settled in neither ready nor failed: ${JSON.stringify(view)}`);
}

describe('workload isolation without bubblewrap', { timeout: 120_000 }, () => {
  it('is reported at start, in the log and in daemon status, and the process driver refuses workloads', async () => {
    const start = await cli.run(['daemon', 'start']);
    expect(start.exitCode, start.stderr).toBe(0);
    expect(start.stderr).toMatch(/workload isolation unavailable: bubblewrap \(bwrap\) is not installed.*install bubblewrap.*--isolation none/);
    const status = await cli.run(['daemon', 'status', '--json']);
    expect(status.json.isolation).toMatchObject({ state: 'unavailable', detail: expect.stringMatching(/install bubblewrap \(apt-get install bubblewrap\) or start the daemon with --isolation none/) });
    expect((await cli.run(['daemon', 'status'])).stdout).toMatch(/isolation\s+unavailable: bubblewrap \(bwrap\) is not installed/);
    const log = readFileSync(join(cli.home, 'logs', 'daemon.log'), 'utf8');
    expect(log.match(/workload isolation unavailable/g)).toHaveLength(1);
    const failed = await deploy(status.json.url, 'refused');
    expect(failed.state).toBe('failed');
    expect(failed.message).toMatch(/refusing to run the workload unsandboxed: bubblewrap \(bwrap\) is not installed.*--isolation none/);
  });

  it('daemon start --isolation none is the explicit opt-out: reported, and workloads run', async () => {
    expect((await cli.run(['daemon', 'stop'])).exitCode).toBe(0);
    const start = await cli.run(['daemon', 'start', '--isolation', 'none', '--json']);
    expect(start.exitCode, start.stderr).toBe(0);
    expect(start.json.isolation).toBe('none');
    expect(start.stderr).toMatch(/workload isolation none: off \(--isolation none\)/);
    const status = await cli.run(['daemon', 'status', '--json']);
    expect(status.json.isolation).toMatchObject({ state: 'none', detail: expect.stringMatching(/unsandboxed/) });
    const ready = await deploy(status.json.url, 'optout');
    expect(ready.state, ready.message).toBe('ready');
  });
});
