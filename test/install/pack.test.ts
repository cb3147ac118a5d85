import { execa } from 'execa';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localPrebuilds, packTarball, ROOT } from './helpers.js';

/**
 * Issue 24 §4: `npm pack` makes a tarball that installs globally on a clean machine, after which
 * the CLI, the daemon and the quickstart work from any folder with runtime dependencies only. The
 * tarball is installed into a temporary prefix and run from a folder outside the checkout, with
 * an environment that carries nothing of npm's or the checkout's.
 */
const work = mkdtempSync(join(tmpdir(), 'platform-install-'));
const prefix = join(work, 'prefix');
const elsewhere = join(work, 'elsewhere');
const home = join(work, 'home');
const installed = join(prefix, 'lib', 'node_modules', 'platform');
const bin = join(prefix, 'bin', 'platform');

/** The environment of a person's shell: none of the npm_* variables `npm exec vitest` adds. */
const cleanEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k) && k !== 'NODE_PATH' && k !== 'INIT_CWD')) as Record<string, string>;
const userEnv = {
  ...cleanEnv,
  PATH: `${join(prefix, 'bin')}:${cleanEnv.PATH}`,
  PLATFORM_HOME: home,
  PLATFORM_ADMIN_PASSWORD: 'Admin-Password-123',
  PLATFORM_NO_KEYCHAIN: '1',
  PLATFORM_SANDBOX_POOL_TARGET: '0',
  NO_COLOR: '1',
  // A TAB gives up after 900 ms; this machine runs many daemons and test files at once.
  PLATFORM_COMPLETION_BUDGET_MS: '10000',
};
const platform = (args: string[], timeout = 60_000) => execa(bin, args, { cwd: elsewhere, env: userEnv, extendEnv: false, reject: false, timeout });

let tarball = '';
const timings: Record<string, number> = {};

beforeAll(async () => {
  mkdirSync(elsewhere, { recursive: true });
  const packed = await packTarball(join(work, 'pack'));
  tarball = packed.file;
  timings.pack = packed.ms;
  const prebuilds = await localPrebuilds(join(work, 'prebuilds'));
  const t0 = performance.now();
  await execa('npm', ['install', '-g', '--prefix', prefix, tarball, '--prefer-offline', '--no-audit', '--no-fund'], {
    cwd: elsewhere,
    env: { ...cleanEnv, ...prebuilds },
    extendEnv: false,
  });
  timings.install = performance.now() - t0;
  console.log(`npm pack ${(timings.pack / 1000).toFixed(1)} s; npm install -g ${(timings.install / 1000).toFixed(1)} s (better-sqlite3 ${prebuilds.npm_config_better_sqlite3_local_prebuilds ? 'from a local prebuild' : 'compiled'})`);
}, 360_000);

afterAll(async () => {
  if (tarball) await platform(['daemon', 'stop']);
  rmSync(work, { recursive: true, force: true });
});

describe('npm pack and a global install', () => {
  it('the tarball holds the built CLI, the daemon bundle, the runtime assets and the templates, and no sources, tests or maps', async () => {
    const files = (await execa('tar', ['-tzf', tarball])).stdout.split('\n').map((f) => f.replace(/^package\//, ''));
    for (const f of [
      'bin/run.js',
      'package.json',
      'oclif.manifest.json',
      'dist/daemon/daemon.bundle.js',
      // The daemon's code, which the bundle loads through a V8 code cache (src/daemon/code-cache.ts).
      'dist/daemon/daemon.code.cjs',
      // zod, loaded by the bundle on the first validated request (scripts/bundle-daemon.mjs).
      'dist/daemon/zod.bundle.cjs',
      'dist/cli-bundle/commands/daemon/start.js',
      'dist/daemon/runtimes/python/shim.py',
      'dist/daemon/runtimes/agent/harness.py',
      'dist/daemon/runtimes/door/door.mjs',
      'dist/daemon/runtimes/sandbox/runner.py',
      'dist/daemon/runtimes/helpers/platform_secrets.py',
      'templates/function-python/main.py',
      // npm drops files named .gitignore from a package: init renames this one.
      'templates/function-python/gitignore',
    ]) {
      expect(files, f).toContain(f);
    }
    expect(files.filter((f) => /^(src|test|bench|scripts|node_modules|docs)\//.test(f) || f.endsWith('.map') || f === 'bin/dev.js')).toEqual([]);
  });

  it('installs the runtime dependencies only: no compiler, test runner or bundler', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    const present = new Set(readdirSync(join(installed, 'node_modules')).flatMap((n) => (n.startsWith('@') ? readdirSync(join(installed, 'node_modules', n)).map((m) => `${n}/${m}`) : [n])));
    for (const dep of Object.keys(pkg.dependencies)) expect(present.has(dep), dep).toBe(true);
    for (const tool of ['typescript', 'vitest', 'tsx', 'oclif', 'esbuild', 'execa', 'fast-check', 'ioredis']) expect(present.has(tool), tool).toBe(false);
  });

  it('platform --version from another folder', async () => {
    const r = await platform(['--version']);
    expect(r.exitCode, r.stderr).toBe(0);
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(r.stdout).toMatch(new RegExp(`^platform/${version.replace(/\./g, '\\.')} `));
  });

  it('the quickstart from another folder: daemon start, a function from a template deployed and invoked, a sandbox run, daemon stop', async () => {
    const start = await platform(['daemon', 'start', '--port', '0', '--json']);
    expect(start.exitCode, start.stderr + start.stdout).toBe(0);
    expect(JSON.parse(start.stdout).url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    const init = await platform(['init', 'hello', '--template', 'function-python']);
    expect(init.exitCode, init.stderr).toBe(0);
    expect(readdirSync(join(elsewhere, 'hello')).sort()).toEqual(['.gitignore', 'README.md', 'main.py', 'platform.json']);
    const deploy = await platform(['deploy', 'hello'], 120_000);
    expect(deploy.exitCode, deploy.stderr + deploy.stdout).toBe(0);
    expect(deploy.stdout).toMatch(/hello is ready/);

    const invoke = await platform(['invoke', 'hello', '-m', 'from elsewhere', '--json']);
    expect(invoke.exitCode, invoke.stderr).toBe(0);
    expect(JSON.parse(invoke.stdout).reply).toBe('hello from elsewhere');

    // Shell completion from the installed copy (bin/run.js finds its manifest beside itself).
    const completion = await platform(['__complete', '--', 'invoke', 'he']);
    expect(completion.exitCode, completion.stderr).toBe(0);
    expect(completion.stdout).toBe('hello\n:0');

    // The code sandbox runs the runner shipped in dist/, not one in a checkout.
    const sandbox = await platform(['sandbox', 'exec', '-c', 'print(6 * 7)']);
    expect(sandbox.exitCode, sandbox.stderr).toBe(0);
    expect(sandbox.stdout.trim()).toBe('42');

    const stop = await platform(['daemon', 'stop']);
    expect(stop.exitCode, stop.stderr).toBe(0);
    const status = await platform(['daemon', 'status', '--json']);
    expect(status.exitCode).toBe(1);
    expect(JSON.parse(status.stdout).running).toBe(false);
  }, 240_000);
});
