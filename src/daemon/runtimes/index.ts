/**
 * How a workload is prepared, built and started for each function runtime and agent framework.
 *
 * The files beside this module (python/shim.py, nodejs/shim.mjs, go/shim.go, ruby/shim.rb,
 * agent/harness.py) are copied into the workload: they are the process that listens on $PORT
 * and calls the user's code (spec 1 §4.13, §6.1, §4.12 invoke). The drivers run what this
 * module describes; they never need to know a runtime's details.
 */
import { SERVER_ENTRIES } from '../../api/serverless.js';
import { packageRoot } from '../../package-root.js';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';

export const RUNTIMES = ['python', 'nodejs', 'go', 'ruby'] as const;
export type Runtime = (typeof RUNTIMES)[number];
/** The name the agents area's placeholder used; kept so both sides merge cleanly. */
export type ShimRuntime = Runtime;

/** Frameworks served by the Python agent harness. */
export const AGENT_FRAMEWORKS = ['adk', 'langgraph', 'crewai'] as const;
export type AgentFramework = (typeof AGENT_FRAMEWORKS)[number];

/** A process to run; env is added to the workload's environment, cwd defaults to the workload dir. */
export interface CommandSpec {
  cmd: string;
  args: string[];
  env?: Record<string, string>;
  cwd?: string;
}

export interface WorkloadCommand {
  /** Copies the shim (or harness) files into the workload directory. */
  prepare?: (dir: string) => Promise<void>;
  /** Runs once per revision after prepare; a non-zero exit fails the build with its output. */
  build?: CommandSpec;
  /** The long-running process; it listens on 127.0.0.1:$PORT. */
  start: CommandSpec;
}

export interface RuntimeOptions {
  /** Python interpreter, e.g. a per-agent virtual environment's bin/python3. Default python3. */
  python?: string;
  /** Shared build cache (Go's GOCACHE and GOPATH live under it). Default: inside the workload. */
  cacheDir?: string;
}

/** Platform files inside a workload live here, away from the user's names. */
export const PLATFORM_DIR = '.platform';

/**
 * Where the shim files are. A checkout reads them from its source tree, so an edited shim needs no
 * build; an installed package has no src/ and reads the copy the build put in dist/daemon/runtimes
 * (scripts/copy-runtime-assets.mjs). Both are found from the package root, wherever this module
 * runs from (src/ under tsx, the module tree in dist/, or the daemon bundle).
 */
let assets: string | undefined;
export function assetsDir(): string {
  if (assets) return assets;
  const root = packageRoot();
  const candidates = [join(root, 'src', 'daemon', 'runtimes'), join(root, 'dist', 'daemon', 'runtimes')];
  const found = candidates.find((d) => existsSync(join(d, 'python', 'shim.py')));
  if (!found) throw new Error(`function shim files not found (looked in ${candidates.join(', ')}); rebuild with \`npm run build\``);
  return (assets = found);
}

/** The door of serverless instances (door/door.mjs, docs/decisions/serverless.md, Isolation). */
export const doorScript = () => join(assetsDir(), 'door', 'door.mjs');

/** Copies assets (relative to the assets dir) into the workload, under the given names. */
function copier(files: Array<[from: string, to: string]>): (dir: string) => Promise<void> {
  return async (dir) => {
    const src = assetsDir();
    await mkdir(join(dir, PLATFORM_DIR), { recursive: true });
    for (const [from, to] of files) await copyFile(join(src, from), join(dir, to));
  };
}

const inPlatformDir = (dir: string, file: string) => join(dir, PLATFORM_DIR, file);

/** Go refuses to build a directory without go.mod; a function needs no module of its own. */
const GO_MOD = 'module function\n\ngo 1.18\n';

/**
 * Without it the compiler's error is "undefined: Handle" in the platform's shim, a file the user
 * never wrote: say it about the user's own files instead.
 */
async function requireGoHandle(dir: string): Promise<void> {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.go') && !f.endsWith('_test.go') && f !== 'platform_shim.go').sort();
  if (!files.length) throw new Error('a go function needs a .go file in package main at the top of the source (for example main.go) defining func Handle');
  for (const f of files) if (/^func\s+Handle\s*\(/m.test(await readFile(join(dir, f), 'utf8'))) return;
  throw new Error(`${files.join(', ')}: no func Handle found; a go function defines func Handle(event map[string]interface{}) (map[string]interface{}, error) in package main`);
}

function onPath(bin: string): boolean {
  return (process.env.PATH ?? '').split(delimiter).some((d) => d && existsSync(join(d, bin)));
}

const nodeCopy = copier([
  ['nodejs/shim.mjs', join(PLATFORM_DIR, 'shim.mjs')],
  ['helpers/platform_secrets.cjs', join(PLATFORM_DIR, 'platform_secrets.cjs')],
]);

/** How to prepare, build and start a function of the given runtime in workloadDir. */
export function runtimeCommand(runtime: Runtime, workloadDir: string, opts: RuntimeOptions = {}): WorkloadCommand {
  const cwd = workloadDir;
  switch (runtime) {
    case 'python':
      return {
        prepare: copier([
          ['python/shim.py', join(PLATFORM_DIR, 'shim.py')],
          ['python/platform_http.py', join(PLATFORM_DIR, 'platform_http.py')],
          // The shim's directory is on sys.path: handlers `from platform_secrets import get_secret`.
          ['helpers/platform_secrets.py', join(PLATFORM_DIR, 'platform_secrets.py')],
        ]),
        start: { cmd: opts.python ?? 'python3', args: ['-u', inPlatformDir(workloadDir, 'shim.py')], env: { PYTHONUNBUFFERED: '1' }, cwd },
      };
    case 'nodejs':
      return {
        // Handlers `require('./.platform/platform_secrets.cjs')` for getSecret.
        prepare: async (dir) => {
          await nodeCopy(dir);
          // The shim's .mjs twin of an ES-syntax index.js, made now: at run time the directory
          // is read-only (sandbox, docker read-only root).
          if (existsSync(join(dir, 'index.js'))) await copyFile(join(dir, 'index.js'), join(dir, '.platform-index.mjs'));
        },
        start: { cmd: 'node', args: [inPlatformDir(workloadDir, 'shim.mjs')], cwd },
      };
    case 'go': {
      const cache = opts.cacheDir ?? join(workloadDir, PLATFORM_DIR, 'cache');
      const copy = copier([['go/shim.go', 'platform_shim.go']]);
      const env: Record<string, string> = {
        GOCACHE: join(cache, 'go-build'),
        GOPATH: join(cache, 'gopath'),
        GO111MODULE: 'on',
        GOTOOLCHAIN: 'local',
      };
      // Go before 1.20 needs a C compiler to link net/http with cgo; without one, build pure Go.
      if (!onPath('gcc') && !onPath('cc')) env.CGO_ENABLED = '0';
      return {
        prepare: async (dir) => {
          await requireGoHandle(dir);
          await copy(dir);
          if (!existsSync(join(dir, 'go.mod'))) await writeFile(join(dir, 'go.mod'), GO_MOD);
        },
        build: { cmd: 'go', args: ['build', '-o', inPlatformDir(workloadDir, 'function'), '.'], env, cwd },
        start: { cmd: inPlatformDir(workloadDir, 'function'), args: [], cwd },
      };
    }
    case 'ruby':
      return {
        prepare: copier([['ruby/shim.rb', join(PLATFORM_DIR, 'shim.rb')]]),
        start: { cmd: 'ruby', args: [inPlatformDir(workloadDir, 'shim.rb')], cwd },
      };
    default:
      throw new Error(`unsupported runtime: ${String(runtime)}`);
  }
}

/**
 * How to prepare, check and start an agent of the given framework. The build step is the
 * harness's --check mode: it fails when the framework's package is missing (naming what to add
 * to requirements.txt) or the entry object is not defined, without running the user's code.
 */
export function agentHarnessCommand(framework: AgentFramework, workloadDir: string, opts: RuntimeOptions = {}): WorkloadCommand {
  if (!AGENT_FRAMEWORKS.includes(framework)) throw new Error(`unsupported agent framework: ${String(framework)}`);
  const python = opts.python ?? 'python3';
  const harness = inPlatformDir(workloadDir, 'harness.py');
  return {
    prepare: copier([
      ['agent/harness.py', join(PLATFORM_DIR, 'harness.py')],
      ['python/platform_http.py', join(PLATFORM_DIR, 'platform_http.py')],
      ['helpers/platform_secrets.py', join(PLATFORM_DIR, 'platform_secrets.py')],
      // `import platform_mcp_client`: the servers of MCP_SERVERS, with no extra package.
      ['mcp/platform_mcp_client.py', join(PLATFORM_DIR, 'platform_mcp_client.py')],
      // `from platform_sandbox import run_python`: the code sandbox tool (spec 2 §4.6).
      ['sandbox/platform_sandbox.py', join(PLATFORM_DIR, 'platform_sandbox.py')],
      // `from platform_knowledge import search_knowledge`: the agent's own knowledge base (issue 23).
      ['agent/platform_knowledge.py', join(PLATFORM_DIR, 'platform_knowledge.py')],
    ]),
    build: { cmd: python, args: [harness, '--check', workloadDir, framework], cwd: workloadDir },
    start: { cmd: python, args: ['-u', harness, '--serve', workloadDir, framework], env: { PYTHONUNBUFFERED: '1' }, cwd: workloadDir },
  };
}

/**
 * How to prepare, check and start an MCP server version (docs/decisions/mcp.md, "Tool runtime").
 * The directory holds tools/<tool>.py and tools.json; prepare adds the runtime, the module tools
 * import (platform_mcp) and the secret reader it fetches credential keys with. The build step
 * imports every tool module and writes .platform/manifest.json (the MCP tool list), failing
 * with one line per problem (syntax error with its line, module without @tool, import error).
 */
export function mcpServerCommand(workloadDir: string, opts: RuntimeOptions = {}): WorkloadCommand {
  const python = opts.python ?? 'python3';
  const server = inPlatformDir(workloadDir, 'mcp_server.py');
  // PYTHONPATH: tool modules import their siblings (`from tools import util`) and platform_mcp.
  const env = { PYTHONUNBUFFERED: '1', PYTHONPATH: workloadDir, PYTHONDONTWRITEBYTECODE: '1' };
  return {
    prepare: copier([
      ['mcp/mcp_server.py', join(PLATFORM_DIR, 'mcp_server.py')],
      ['mcp/platform_mcp.py', join(PLATFORM_DIR, 'platform_mcp.py')],
      // The function shim's HTTP helpers: the runtime shares its /proc/self/environ scrubbing.
      ['python/platform_http.py', join(PLATFORM_DIR, 'platform_http.py')],
      ['helpers/platform_secrets.py', join(PLATFORM_DIR, 'platform_secrets.py')],
    ]),
    build: { cmd: python, args: [server, '--check', workloadDir], env, cwd: workloadDir },
    start: { cmd: python, args: ['-u', server, '--serve', workloadDir], env, cwd: workloadDir },
  };
}

const resolved = new Map<string, Promise<string>>();

/**
 * The real interpreter behind a command such as `python3`. Version managers put a shell script
 * on PATH (pyenv's shim costs most of a second per start), which would dominate a cold start;
 * pass the result as RuntimeOptions.python. Falls back to the command itself.
 */
export function resolvePython(cmd = 'python3'): Promise<string> {
  let found = resolved.get(cmd);
  if (!found) {
    found = new Promise((resolve) => {
      execFile(cmd, ['-c', 'import sys; print(sys.executable)'], { timeout: 10_000 }, (err, stdout) => {
        const path = stdout.trim();
        resolve(!err && path && existsSync(path) ? path : cmd);
      });
    });
    resolved.set(cmd, found);
  }
  return found;
}

const PROBES: Record<Runtime, { bin: string; args: string[]; pkg: string }> = {
  python: { bin: 'python3', args: ['--version'], pkg: 'python3' },
  nodejs: { bin: 'node', args: ['--version'], pkg: 'nodejs' },
  go: { bin: 'go', args: ['version'], pkg: 'golang-go' },
  ruby: { bin: 'ruby', args: ['--version'], pkg: 'ruby' },
};

/** Whether this machine can run the runtime's toolchain (the process driver needs it on PATH). */
export function runtimeAvailable(runtime: Runtime): Promise<{ ok: boolean; reason?: string }> {
  const probe = PROBES[runtime];
  if (!probe) return Promise.resolve({ ok: false, reason: `unsupported runtime: ${String(runtime)}` });
  return new Promise((resolve) => {
    execFile(probe.bin, probe.args, { timeout: 10_000 }, (err) => {
      if (!err) return resolve({ ok: true });
      const missing = (err as NodeJS.ErrnoException).code === 'ENOENT';
      resolve({
        ok: false,
        reason: missing
          ? `${probe.bin} is not on PATH (install the ${probe.pkg} package)`
          : `${probe.bin} ${probe.args.join(' ')} failed: ${err.message}`,
      });
    });
  });
}


/**
 * Which runtime a folder deployed as a serverless service is (docs/decisions/serverless.md, Data
 * plane): go.mod or a .go file, package.json or index.js, main.py or requirements.txt, app.rb or
 * a Gemfile, looked for in that order; undefined when none matches.
 */
export function detectServerRuntime(paths: string[]): Runtime | undefined {
  const top = paths.filter((p) => !p.includes('/'));
  return SERVER_ENTRIES.find((e) => e.found(top))?.runtime;
}

/**
 * A folder that is its own web server listening on $PORT (serverless services): no shim. Python
 * runs main.py; Node runs package.json's start script, else its main, else index.js; Go builds the
 * module into .platform/server; Ruby runs app.rb.
 */
export async function serverCommand(runtime: Runtime, workloadDir: string, opts: RuntimeOptions = {}): Promise<WorkloadCommand> {
  const cwd = workloadDir;
  switch (runtime) {
    case 'python':
      return { start: { cmd: opts.python ?? 'python3', args: ['-u', 'main.py'], env: { PYTHONUNBUFFERED: '1' }, cwd } };
    case 'nodejs': {
      let pkg: { main?: string; scripts?: { start?: string } } = {};
      try {
        pkg = JSON.parse(await readFile(join(workloadDir, 'package.json'), 'utf8'));
      } catch {
        // no package.json (or an unreadable one): index.js
      }
      if (pkg.scripts?.start) return { start: { cmd: '/bin/sh', args: ['-c', pkg.scripts.start], env: { NODE_ENV: 'production' }, cwd } };
      return { start: { cmd: 'node', args: [pkg.main ?? 'index.js'], env: { NODE_ENV: 'production' }, cwd } };
    }
    case 'go': {
      const cache = opts.cacheDir ?? join(workloadDir, PLATFORM_DIR, 'cache');
      const env: Record<string, string> = { GOCACHE: join(cache, 'go-build'), GOPATH: join(cache, 'gopath'), GO111MODULE: 'on', GOTOOLCHAIN: 'local' };
      if (!onPath('gcc') && !onPath('cc')) env.CGO_ENABLED = '0';
      return {
        prepare: async (dir) => {
          await mkdir(join(dir, PLATFORM_DIR), { recursive: true });
          if (!existsSync(join(dir, 'go.mod'))) await writeFile(join(dir, 'go.mod'), 'module server\n\ngo 1.18\n');
        },
        build: { cmd: 'go', args: ['build', '-o', inPlatformDir(workloadDir, 'server'), '.'], env, cwd },
        start: { cmd: inPlatformDir(workloadDir, 'server'), args: [], cwd },
      };
    }
    case 'ruby':
      return { start: { cmd: 'ruby', args: ['app.rb'], cwd } };
    default:
      throw new Error(`unsupported runtime: ${String(runtime)}`);
  }
}
