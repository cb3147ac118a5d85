import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runtimeAvailable } from '../../src/daemon/runtimes/index.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { cast } from '../helpers/fixtures.js';
import { HELLO_PY, WHEEL_PY, archive, deployForm, waitState, wheelFolder } from './helpers.js';

/**
 * Builds that fail say why (the compiler's line, pip's last error), keep their whole log per
 * revision, and never turn a serving agent into a failed one.
 */
let d: TestDaemon;
let c: Awaited<ReturnType<typeof cast>>;
let token: string;
const q = () => `?project=${c.project.slug}`;
const hasGo = (await runtimeAvailable('go')).ok;
const hasPip = spawnSync('python3', ['-m', 'pip', '--version']).status === 0;
if (!hasGo) console.warn('SKIPPED: go build failures: go is not on PATH');
if (!hasPip) console.warn('SKIPPED: pip build failures: python3 -m pip is not available');

beforeAll(async () => {
  d = await startTestDaemon({ invokeAuthRequired: false });
  c = await cast(d);
  token = c.member.token;
});
afterAll(async () => d?.close());

const deploy = async (name: string, files: Record<string, string>, runtime = 'python') => {
  const r = await deployForm(d, token, { name, framework: 'function', runtime }, archive(files), q());
  expect(r.status, JSON.stringify(r.body)).toBe(202);
  return r.body.build_id as string;
};
const buildLog = (name: string, query = '') => d.api('GET', `/v1/agents/${name}/logs/build${q()}${query}`, { token });
const revisions = async (name: string) => (await d.api('GET', `/v1/agents/${name}/revisions${q()}`, { token })).body.revisions as any[];

describe.skipIf(!hasGo)('go compiler errors', () => {
  it('the failure message carries the compiler line of the user file, and the revision is listed as failed', async () => {
    const MAIN = 'package main\n\nfunc Handle(event map[string]interface{}) (map[string]interface{}, error) {\n\treturn map[string]interface{}{"ok": true}, nil\n\tx :=\n}\n';
    await deploy('gobad', { 'main.go': MAIN }, 'go');
    const failed = await waitState(d, token, 'gobad', 'failed', c.project.slug, 60_000);
    // The headline names the cause: the compiler's line in main.go (line 6: `x :=` runs into `}`).
    expect(failed.message.split('\n')[0]).toMatch(/^revision gobad-00001 failed to build: \S*main\.go:6:\d+: syntax error/);
    expect(failed.message).not.toMatch(/platform_shim\.go/);
    expect(failed).toMatchObject({ ready: false, latest_revision: 'gobad-00001' });
    expect(failed.serving_revision).toBeUndefined();
    const [rev] = await revisions('gobad');
    expect(rev).toMatchObject({ name: 'gobad-00001', state: 'failed', serving: false });
    expect(rev.message).toMatch(/main\.go:6:\d+: syntax error/);
  });

  it('a go function without Handle is told so about its own file, not the shim', async () => {
    await deploy('gonohandle', { 'main.go': 'package main\n\nfunc Hello() {}\n' }, 'go');
    const failed = await waitState(d, token, 'gonohandle', 'failed', c.project.slug, 60_000);
    expect(failed.message.split('\n')[0]).toMatch(/main\.go: no func Handle found; a go function defines func Handle\(event map\[string\]interface\{\}\)/);
    expect(failed.message).not.toMatch(/platform_shim|undefined: Handle/);
  });
});

describe('the build log', () => {
  it('is kept per revision and read by revision name, number, build id or as the newest', async () => {
    const first = await deploy('logged', { 'main.py': HELLO_PY });
    await waitState(d, token, 'logged', 'ready', c.project.slug);
    const newest = await buildLog('logged');
    expect(newest.status).toBe(200);
    expect(newest.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(newest.text).toMatch(new RegExp(`^build ${first} for logged \\(function/python\\) on the process driver\\n`));
    expect(newest.text).toMatch(/build finished\n$/);
    // A settings revision shows the build of its artifact.
    expect((await d.api('PATCH', `/v1/agents/logged/env${q()}`, { token, body: { set: { GREETING: 'hi' } } })).status).toBe(200);
    expect((await revisions('logged')).map((r) => [r.name, r.reason, r.build_id])).toEqual([
      ['logged-00002', 'env', first],
      ['logged-00001', 'deploy', first],
    ]);
    for (const query of ['&revision=1', '&revision=logged-00001', '&revision=2', `&build=${first}`]) {
      const r = await buildLog('logged', query);
      expect(r.status, query).toBe(200);
      expect(r.text, query).toBe(newest.text);
    }
    expect((await buildLog('logged', '&revision=9')).status).toBe(404);
    expect((await buildLog('logged', '&revision=logged-00009')).body.error).toBe('no revision logged-00009 for agent logged');
    expect((await buildLog('logged', '&build=nope')).status).toBe(400);
    expect((await buildLog('logged', `&build=${first}&revision=1`)).status).toBe(400);
    // Someone outside the project reads nothing of it.
    const outside = await d.api('GET', `/v1/agents/logged/logs/build${q()}`, { token: c.outsider.token });
    expect(outside.status).toBe(404);
    expect(outside.text).not.toContain('build finished');
  });

  it.skipIf(!hasPip)('streams a running build live with follow, ending when the build ends', async () => {
    const w = d.app.ctx.config.workloads;
    w.pip.findLinks = wheelFolder();
    try {
      const build = await deploy('streamed', { 'main.py': WHEEL_PY, 'requirements.txt': 'tinywheel==0.1\n' });
      const res = await fetch(`${d.url}/v1/agents/streamed/logs/build${q()}&build=${build}&follow=true`, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status).toBe(200);
      const chunks: { at: number; text: string }[] = [];
      const decoder = new TextDecoder();
      for await (const c of res.body as unknown as AsyncIterable<Uint8Array>) chunks.push({ at: Date.now(), text: decoder.decode(c, { stream: true }) });
      const whole = chunks.map((c) => c.text).join('');
      // Output arrived in pieces while pip ran, not in one piece at the end.
      expect(chunks.length).toBeGreaterThan(1);
      expect(whole).toMatch(/\$ pip install -r requirements\.txt --find-links \S+ --no-index\n/);
      expect(whole).toMatch(/Successfully installed tinywheel-0\.1/);
      expect(whole).toMatch(/build finished\n$/);
      // What was streamed is what is kept.
      await waitState(d, token, 'streamed', 'ready', c.project.slug, 60_000);
      expect((await buildLog('streamed', `&build=${build}`)).text).toBe(whole);
      // And the wheel folder really served the install.
      expect((await d.api('POST', `/v1/agents/streamed/invoke${q()}`, { body: { message: 'x' } })).body.reply).toBe('from a local wheel');
    } finally {
      w.pip.findLinks = undefined;
    }
  });
});

describe.skipIf(!hasPip)('python requirements', () => {
  it('an unreachable package index fails in seconds, saying so and how to build from a wheel folder', async () => {
    const started = Date.now();
    await deploy('offline', { 'main.py': HELLO_PY, 'requirements.txt': 'surely-not-installed-pkg-xyz==1.0\n' });
    const failed = await waitState(d, token, 'offline', 'failed', c.project.slug, 60_000);
    const seconds = (Date.now() - started) / 1000;
    console.log(`unreachable index: the build failed after ${seconds.toFixed(1)} s`);
    // pip alone would wait out its timeout on each of its five retries; a loaded 2-core machine takes about 10 s here.
    expect(seconds).toBeLessThan(30);
    const headline = failed.message.split('\n')[0];
    expect(headline).toMatch(/^revision offline-00001 failed to build: pip could not reach the package index to install surely-not-installed-pkg-xyz==1\.0\./);
    expect(headline).toMatch(/PLATFORM_PIP_FIND_LINKS=\/path\/to\/wheels \(pip then installs with --find-links DIR --no-index/);
    // pip's own evidence stays in the tail.
    expect(failed.message).toMatch(/Failed to establish a new connection|NewConnectionError|Name or service not known/);
  });

  it("a requirement the wheel folder lacks fails with pip's final error in the headline", async () => {
    const w = d.app.ctx.config.workloads;
    w.pip.findLinks = wheelFolder();
    try {
      await deploy('nowheel', { 'main.py': HELLO_PY, 'requirements.txt': 'tinywheel==0.1\nabsent-wheel==2.0\n' });
      const failed = await waitState(d, token, 'nowheel', 'failed', c.project.slug, 60_000);
      expect(failed.message.split('\n')[0]).toBe('revision nowheel-00001 failed to build: ERROR: No matching distribution found for absent-wheel==2.0');
      expect(failed.message).not.toMatch(/could not reach the package index/);
    } finally {
      w.pip.findLinks = undefined;
    }
  });

  it('a failed redeploy keeps the previous revision serving: the agent reads ready, the new revision is listed as failed', async () => {
    await deploy('steady', { 'main.py': HELLO_PY });
    await waitState(d, token, 'steady', 'ready', c.project.slug);
    expect((await d.api('PUT', `/v1/agents/steady/files/requirements.txt${q()}`, { token, body: { content: 'surely-not-installed-pkg-xyz==1.0\n' } })).status).toBe(200);
    const rd = await d.api('POST', `/v1/agents/steady/redeploy${q()}`, { token });
    expect(rd.status).toBe(202);
    const view = await waitState(d, token, 'steady', 'ready', c.project.slug, 60_000);
    expect(view).toMatchObject({ state: 'ready', ready: true, latest_revision: 'steady-00002', serving_revision: 'steady-00001' });
    expect(view.message.split('\n')[0]).toMatch(/^revision steady-00002 failed to build \(steady-00001 keeps serving\): pip could not reach the package index/);
    expect((await revisions('steady')).map((r) => [r.name, r.state, r.serving])).toEqual([
      ['steady-00002', 'failed', false],
      ['steady-00001', 'ready', true],
    ]);
    // It answers all along, from the previous revision.
    const served = await d.api('POST', `/v1/agents/steady/invoke${q()}`, { body: { message: 'still' } });
    expect(served.status).toBe(200);
    expect(served.body.reply).toBe('hello still');
    // The failed revision's build log is the redeploy's.
    const log = await buildLog('steady', '&revision=2');
    expect(log.text).toContain(`build ${rd.body.build_id} for steady`);
    expect(log.text).toMatch(/pip could not reach the package index/);
  });
});
