/**
 * The interface the deploy code uses (src/daemon/runtimes/index.ts): what prepare writes, how a
 * build or start fails when the user's code does not follow the handler convention, and the
 * availability probe.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  AGENT_FRAMEWORKS,
  PLATFORM_DIR,
  RUNTIMES,
  agentHarnessCommand,
  resolvePython,
  runtimeAvailable,
  runtimeCommand,
  type CommandSpec,
  type Runtime,
} from '../../src/daemon/runtimes/index.js';
import { freePort, tempDir } from './helpers.js';

const available = Object.fromEntries(await Promise.all(RUNTIMES.map(async (r) => [r, await runtimeAvailable(r)] as const))) as Record<
  Runtime,
  { ok: boolean; reason?: string }
>;
for (const r of RUNTIMES) if (!available[r].ok) console.warn(`SKIPPING ${r} start-failure tests: ${available[r].reason}`);

const cleanups: Array<() => void> = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

function workload(files: Record<string, string>): string {
  const dir = tempDir('runtime-');
  cleanups.push(dir.remove);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir.path, name), text);
  return dir.path;
}

function run(spec: CommandSpec, env: Record<string, string> = {}): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(spec.cmd, spec.args, { cwd: spec.cwd, env: { ...process.env, ...spec.env, ...env }, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, output: `${stdout}${stderr}` });
    });
  });
}

/** Starts a workload that must fail at start-up, and returns its exit code and output. */
async function startFails(runtime: Runtime, dir: string) {
  const cmd = runtimeCommand(runtime, dir, { python: await resolvePython() });
  await cmd.prepare?.(dir);
  return run(cmd.start, { PORT: String(await freePort()), PLATFORM_INSTANCE_SECRET: 'secret-for-a-start-that-fails' });
}

describe('runtime commands', () => {
  it('lists the four function runtimes and three agent frameworks', () => {
    expect(RUNTIMES).toEqual(['python', 'nodejs', 'go', 'ruby']);
    expect(AGENT_FRAMEWORKS).toEqual(['adk', 'langgraph', 'crewai']);
  });

  it('refuses what it does not know', () => {
    expect(() => runtimeCommand('java' as Runtime, '/w')).toThrow('unsupported runtime: java');
    expect(() => agentHarnessCommand('function' as never, '/w')).toThrow('unsupported agent framework: function');
  });

  it('prepare puts platform files under .platform/ (go: the shim beside the handler) and keeps a user go.mod', async () => {
    const py = workload({ 'main.py': 'def handle(e):\n    return e\n' });
    await runtimeCommand('python', py).prepare!(py);
    expect(existsSync(join(py, PLATFORM_DIR, 'shim.py'))).toBe(true);
    expect(existsSync(join(py, PLATFORM_DIR, 'platform_http.py'))).toBe(true);

    const handle = 'package main\n\nfunc Handle(event map[string]interface{}) (map[string]interface{}, error) { return event, nil }\n';
    const go = workload({ 'handler.go': handle });
    await runtimeCommand('go', go).prepare!(go);
    expect(existsSync(join(go, 'platform_shim.go'))).toBe(true);
    expect(readFileSync(join(go, 'go.mod'), 'utf8')).toMatch(/^module function\n/);

    const own = workload({ 'handler.go': handle, 'go.mod': 'module example.com/mine\n\ngo 1.19\n' });
    await runtimeCommand('go', own).prepare!(own);
    expect(readFileSync(join(own, 'go.mod'), 'utf8')).toBe('module example.com/mine\n\ngo 1.19\n');

    const agent = workload({ 'agent.py': 'root_agent = None\n' });
    await agentHarnessCommand('adk', agent).prepare!(agent);
    expect(existsSync(join(agent, PLATFORM_DIR, 'harness.py'))).toBe(true);
  });

  it('every start command runs in the workload directory; go builds into .platform with its cache', () => {
    for (const r of RUNTIMES) expect(runtimeCommand(r, '/w').start.cwd).toBe('/w');
    const go = runtimeCommand('go', '/w', { cacheDir: '/cache' });
    expect(go.build).toMatchObject({ cmd: 'go', args: ['build', '-o', '/w/.platform/function', '.'], cwd: '/w' });
    expect(go.build!.env).toMatchObject({ GOCACHE: '/cache/go-build', GOPATH: '/cache/gopath' });
    expect(runtimeCommand('go', '/w').build!.env!.GOCACHE).toBe('/w/.platform/cache/go-build');
    expect(runtimeCommand('python', '/w', { python: '/venv/bin/python3' }).start.cmd).toBe('/venv/bin/python3');
  });

  it('resolvePython finds the interpreter behind the command', async () => {
    const path = await resolvePython();
    expect(existsSync(path)).toBe(true);
    expect(await resolvePython('no-such-python-here')).toBe('no-such-python-here');
  });

  it('runtimeAvailable says which package to install when a toolchain is missing', async () => {
    const saved = process.env.PATH;
    const empty = join(tmpdir(), 'empty-path-dir');
    mkdirSync(empty, { recursive: true });
    process.env.PATH = empty;
    try {
      expect(await runtimeAvailable('go')).toEqual({ ok: false, reason: 'go is not on PATH (install the golang-go package)' });
      expect(await runtimeAvailable('ruby')).toEqual({ ok: false, reason: 'ruby is not on PATH (install the ruby package)' });
    } finally {
      process.env.PATH = saved;
    }
    expect(await runtimeAvailable('python')).toEqual({ ok: true });
  });
});

describe('a handler that does not follow the convention fails loudly', () => {
  it.skipIf(!available.python.ok)('python: no main.py', async () => {
    const r = await startFails('python', workload({ 'app.py': '' }));
    expect(r.code).not.toBe(0);
    expect(r.output).toContain('function shim: main.py not found');
  });

  it.skipIf(!available.python.ok)('python: main.py without handle', async () => {
    const r = await startFails('python', workload({ 'main.py': 'def handler(event):\n    return {}\n' }));
    expect(r.code).not.toBe(0);
    expect(r.output).toContain('function shim: main.py must define handle(event)');
  });

  it.skipIf(!available.python.ok)('python: an async handle is refused (the spec asks for a plain function)', async () => {
    const r = await startFails('python', workload({ 'main.py': 'async def handle(event):\n    return {}\n' }));
    expect(r.code).not.toBe(0);
    expect(r.output).toContain('function shim: handle in main.py must be a plain function, not async def');
  });

  it.skipIf(!available.nodejs.ok)('nodejs: no index file', async () => {
    const r = await startFails('nodejs', workload({ 'main.js': '' }));
    expect(r.code).toBe(1);
    expect(r.output).toContain('function shim: index.mjs or index.js not found');
  });

  it.skipIf(!available.nodejs.ok)('nodejs: index.js without handle', async () => {
    const r = await startFails('nodejs', workload({ 'index.js': 'module.exports.other = () => 1;\n' }));
    expect(r.code).toBe(1);
    expect(r.output).toMatch(/function shim: .*index\.js must export a function named handle/);
  });

  it.skipIf(!available.ruby.ok)('ruby: handler.rb without handle', async () => {
    const r = await startFails('ruby', workload({ 'handler.rb': 'def other(event) = 1\n' }));
    expect(r.code).not.toBe(0);
    expect(r.output).toContain('function shim: handler.rb must define handle(event)');
  });

  it('go: a package without Handle fails at prepare, naming the user\'s file rather than the shim', async () => {
    const dir = workload({ 'handler.go': 'package main\n\nfunc Other() {}\n' });
    await expect(runtimeCommand('go', dir).prepare!(dir)).rejects.toThrow(/^handler\.go: no func Handle found/);
    expect(existsSync(join(dir, 'platform_shim.go'))).toBe(false);
  });
});
