import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, lchownSync, lstatSync, mkdirSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { AGENT_FRAMEWORKS, agentHarnessCommand, mcpServerCommand, resolvePython, runtimeCommand, serverCommand, type AgentFramework, type Runtime, type WorkloadCommand } from '../runtimes/index.js';
import { pipIndexUnreachable, pipInstallArgs, type PipSource } from './pip.js';
import { BuildFailure, type Artifact, type BuildSpec, type DoorSpec, type Driver, type RunningInstance, type StartSpec } from './driver.js';
import { instanceLimits, releaseCgroups } from './limits.js';
import { interpreterRoots, isolationStatus, pipSettings, runsAsRoot, SANDBOX_UID, sandboxCommand, sandboxPath, toolRoot, type IsolationMode } from './sandbox.js';

const isAgentFramework = (f: string): f is AgentFramework => (AGENT_FRAMEWORKS as readonly string[]).includes(f);

/** The toolchain each function runtime runs (python has its own resolution, interpreterRoots). */
const TOOLS: Record<string, string> = { nodejs: 'node', go: 'go', ruby: 'ruby' };

/** How a build step runs: on the host, or in a sandbox seeing these paths. */
interface StepSandbox {
  readOnly: string[];
  writable: string[];
  mapped?: Array<[string, string]>;
}

/**
 * The default driver: the shim and the handler run as child processes on 127.0.0.1, each
 * instance in its own process group (and, sandboxed, its own PID namespace and cgroup) so
 * stopping it stops everything it started. An artifact is a directory holding the revision's
 * source (plus whatever the runtime's build produced). Instances and the build steps that run
 * user code (pip install, go build, the agent harness's --check) run under bubblewrap unless
 * the daemon was started with --isolation none (sandbox.ts).
 */
export class ProcessDriver implements Driver {
  readonly name = 'process' as const;

  constructor(
    private readonly workloadsDir: string,
    private readonly cacheDir: string,
    private readonly isolation: IsolationMode = 'sandbox',
  ) {}

  /** True when workloads run sandboxed; throws the refusal when they should and cannot. */
  private async sandboxed(): Promise<boolean> {
    if (this.isolation === 'none') return false;
    const status = await isolationStatus('sandbox');
    if (status.state !== 'bubblewrap') throw new Error(`refusing to run the workload unsandboxed: ${status.detail}`);
    return true;
  }

  async build(spec: BuildSpec, output: (chunk: string) => void, signal: AbortSignal): Promise<Artifact> {
    if (spec.framework === 'container') {
      throw new BuildFailure(
        'the container framework builds a Dockerfile and runs only under the docker driver; start the daemon with PLATFORM_DRIVER=docker, or deploy a function or agent framework instead\n',
      );
    }
    if (spec.framework === 'mcp') return this.buildMcp(spec, output, signal);
    const dir = join(this.workloadsDir, spec.agentId, spec.revision);
    rmSync(dir, { recursive: true, force: true });
    for (const f of spec.files) {
      const target = join(dir, f.path);
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, f.content);
      chmodSync(target, f.mode & 0o755 | 0o600);
    }
    output(`source: ${spec.files.length} files written to ${spec.revision}\n`);
    let sandbox: boolean;
    try {
      sandbox = await this.sandboxed();
    } catch (e) {
      throw new BuildFailure(`${(e as Error).message}\n`);
    }
    // A root daemon's sandboxed steps run as nobody: the revision is theirs from the start (the
    // daemon's umask 077 leaves what it writes unreadable to anyone else).
    if (sandbox && runsAsRoot()) chownTree(dir);
    const venv = await this.pythonEnv(dir, output, signal, sandbox, spec.pip);
    const cmd = await this.commands(spec.framework, spec.runtime, dir, venv);
    await cmd.prepare?.(dir);
    // What prepare added (shims, helpers) is theirs too.
    if (sandbox && runsAsRoot()) chownTree(dir);
    if (cmd.build) {
      // The agent harness's build is its --check: a missing framework package fails here,
      // naming the line to add to requirements.txt.
      output(`$ ${cmd.build.cmd} ${cmd.build.args.join(' ')}\n`);
      const goCache = join(this.cacheDir, 'build');
      const writable = [dir];
      if (cmd.build.env?.GOCACHE) {
        mkdirSync(goCache, { recursive: true });
        if (sandbox && runsAsRoot()) ownCache(goCache);
        writable.push(goCache);
      }
      const python = venv ?? (await resolvePython('python3'));
      const tool = TOOLS[spec.runtime ?? ''] ? toolRoot(TOOLS[spec.runtime ?? '']!) : undefined;
      const box = sandbox ? { readOnly: [...(venv ? [dirname(dirname(venv))] : []), ...interpreterRoots(python), ...(tool ? [tool.root] : [])], writable } : undefined;
      const code = await run(cmd.build.cmd, cmd.build.args, cmd.build.cwd ?? dir, output, signal, { ...pythonPath(spec.framework, spec.runtime, dir), ...cmd.build.env }, box);
      if (code !== 0) throw new BuildFailure(`build step exited with code ${code}\n`);
    }
    if (venv) writeFileSync(join(dir, '.platform-python'), venv);
    output('build finished\n');
    return { ref: dir };
  }

  /**
   * An MCP server version (docs/decisions/mcp.md, Daemon area): a content-addressed directory
   * `workloads/mcp/sha256-<hex>`, the hash of the tool files, tools.json and the runtime's files.
   * An identical tool set finds its directory built and is not built again; otherwise the
   * runtime's --check (sandboxed, like the agent harness's) imports every tool module and writes
   * the manifest, and its stderr lines are the failure's cause.
   */
  private async buildMcp(spec: BuildSpec, output: (chunk: string) => void, signal: AbortSignal): Promise<Artifact> {
    const root = join(this.workloadsDir, 'mcp');
    const staging = join(root, `.staging-${randomBytes(6).toString('hex')}`);
    try {
      for (const f of spec.files) {
        const target = join(staging, f.path);
        mkdirSync(dirname(target), { recursive: true });
        writeFileSync(target, f.content);
        chmodSync(target, 0o600);
      }
      const python = await resolvePython('python3');
      const cmd = mcpServerCommand(staging, { python });
      await cmd.prepare?.(staging);
      const hex = treeDigest(staging);
      const final = join(root, `sha256-${hex}`);
      if (existsSync(join(final, '.platform', 'manifest.json'))) {
        output(`tool set unchanged from a built version: reusing sha256:${hex} (no build step)\n`);
        return { ref: final, digest: `sha256:${hex}`, reused: true };
      }
      let sandbox: boolean;
      try {
        sandbox = await this.sandboxed();
      } catch (e) {
        throw new BuildFailure(`${(e as Error).message}\n`);
      }
      if (sandbox && runsAsRoot()) chownTree(staging);
      // The check runs where the version will live: paths it prints name the final directory's files.
      rmSync(final, { recursive: true, force: true });
      renameSync(staging, final);
      const check = mcpServerCommand(final, { python }).build!;
      output(`$ python3 .platform/mcp_server.py --check\n`);
      let said = '';
      const tee = (c: string) => {
        output(c);
        said = (said + c).slice(-16_384);
      };
      const box = sandbox ? { readOnly: interpreterRoots(python), writable: [final] } : undefined;
      const code = await run(check.cmd, check.args, final, tee, signal, check.env, box);
      if (code !== 0 || !existsSync(join(final, '.platform', 'manifest.json'))) {
        rmSync(final, { recursive: true, force: true });
        const lines = said.split('\n').map((l) => l.trim()).filter(Boolean);
        throw new BuildFailure(`the tool check exited with code ${code}\n`, lines.slice(-5).join('\n') || `the tool check exited with code ${code}`);
      }
      output(`build finished: sha256:${hex}\n`);
      return { ref: final, digest: `sha256:${hex}` };
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
  }

  async start(spec: StartSpec): Promise<RunningInstance> {
    const sandbox = await this.sandboxed();
    const marker = join(spec.artifact, '.platform-python');
    const venvPython = existsSync(marker) ? readFileSync(marker, 'utf8') : undefined;
    const cmd = withOverrides((await this.commands(spec.framework, spec.runtime, spec.artifact, venvPython)).start, spec.command, spec.args);
    const cwd = cmd.cwd ?? spec.artifact;
    const env = {
      // The machine's PATH so python3, node, go and ruby resolve; HOME for tools that want one.
      PATH: venvPython ? `${dirname(venvPython)}:${process.env.PATH ?? ''}` : (process.env.PATH ?? '/usr/bin:/bin'),
      HOME: spec.artifact,
      ...pythonPath(spec.framework, spec.runtime, spec.artifact),
      ...cmd.env,
      ...spec.env,
      PORT: String(spec.port),
    };
    if (spec.door && !sandbox) throw new Error('a private network namespace needs the sandbox (bubblewrap)');
    if (!sandbox) return processInstance(spawn(cmd.cmd, cmd.args, { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] }));
    // A revision built before the sandbox (or unsandboxed) is still root's: hand it over once.
    if (runsAsRoot() && statSync(spec.artifact).uid !== SANDBOX_UID) chownTree(spec.artifact);
    const python = venvPython ?? (await resolvePython('python3'));
    const tool = TOOLS[spec.runtime ?? ''] ? toolRoot(TOOLS[spec.runtime ?? '']!) : undefined;
    // Inside, the sandbox's own PATH (the daemon's may name version-manager shims it cannot
    // see) and a HOME on its private /tmp.
    env.PATH = sandboxPath([...(venvPython ? [dirname(venvPython)] : []), ...(python.startsWith('/') ? [dirname(python)] : []), ...(tool ? [tool.bin] : [])]);
    env.HOME = '/tmp';
    const readOnly = [spec.artifact, ...(venvPython ? [dirname(dirname(venvPython))] : []), ...interpreterRoots(python), ...(tool ? [tool.root] : [])];
    let run = spec.door ? behindDoor(spec.door, spec.port, cmd, cwd, readOnly) : sandboxCommand({ cmd: cmd.cmd, args: cmd.args, cwd, readOnly });
    // Go and Node (the door is Node too) reserve large virtual regions up front: an address-space rlimit would stop them.
    const limits = spec.limits ? instanceLimits(spec.instanceId, spec.limits, !spec.door && spec.runtime !== 'go' && spec.runtime !== 'nodejs') : undefined;
    if (limits) run = limits.wrap(run.cmd, run.args);
    const child = spawn(run.cmd, run.args, { cwd: '/', env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    return processInstance(child, limits ? () => limits.release() : undefined);
  }

  async reap(leftover: { id?: string; pid?: number | null }): Promise<void> {
    if (leftover.pid) killGroup(leftover.pid, 'SIGKILL');
    if (leftover.id) await releaseCgroups(leftover.id);
  }

  async discard(artifact: string): Promise<void> {
    rmSync(artifact, { recursive: true, force: true });
  }

  /**
   * The runtimes module's commands. python3 is resolved to the real interpreter once: a version
   * manager's PATH shim would otherwise cost most of a second on every cold start.
   */
  private async commands(framework: string, runtime: string | undefined, dir: string, venvPython?: string): Promise<WorkloadCommand> {
    const opts = { python: venvPython ?? (await resolvePython('python3')), cacheDir: join(this.cacheDir, 'build') };
    if (isAgentFramework(framework)) return agentHarnessCommand(framework, dir, opts);
    if (framework === 'mcp') return mcpServerCommand(dir, opts);
    if (framework === 'server') return serverCommand((runtime ?? 'python') as Runtime, dir, opts);
    return runtimeCommand((runtime ?? 'python') as Runtime, dir, opts);
  }

  /**
   * Python dependencies: requirements.txt installs into a virtual environment that sees the
   * system's site packages, cached by the file's hash so an unchanged file costs nothing.
   */
  private async pythonEnv(dir: string, output: (c: string) => void, signal: AbortSignal, sandbox: boolean, pip?: PipSource): Promise<string | undefined> {
    const req = join(dir, 'requirements.txt');
    if (!existsSync(req)) return undefined;
    const text = readFileSync(req, 'utf8');
    if (!text.split('\n').some((l) => l.trim() && !l.trim().startsWith('#'))) return undefined;
    const hash = createHash('sha256').update(text).digest('hex').slice(0, 16);
    const venv = join(this.cacheDir, 'venvs', hash);
    const python = join(venv, 'bin', 'python');
    if (existsSync(join(venv, '.complete'))) {
      output(`requirements.txt: reusing cached environment ${hash}\n`);
      return python;
    }
    rmSync(venv, { recursive: true, force: true });
    mkdirSync(dirname(venv), { recursive: true });
    // Without its own pip the environment is created in a fraction of the time; the machine's
    // pip installs into it through --python.
    output('$ python3 -m venv --without-pip --system-site-packages\n');
    if ((await run('python3', ['-m', 'venv', '--without-pip', '--system-site-packages', venv], dir, output, signal)) !== 0) {
      throw new BuildFailure('could not create the virtual environment\n');
    }
    output(`$ pip install -r requirements.txt${pip?.findLinks ? ` --find-links ${pip.findLinks} --no-index` : ''}\n`);
    let said = '';
    const tee = (c: string) => {
      output(c);
      said = (said + c).slice(-16_384);
    };
    // pip runs the packages' own build code: sandboxed, it may write only the environment.
    const host = await resolvePython('python3');
    if (sandbox && runsAsRoot()) chownTree(venv);
    const settings = pipSettings('/tmp');
    const wheels = pip?.findLinks ? [pip.findLinks] : [];
    const box = sandbox ? { readOnly: [dir, ...interpreterRoots(host), ...settings.readOnly, ...wheels], writable: [venv], mapped: settings.mapped } : undefined;
    const code = await run(sandbox ? host : 'python3', pipInstallArgs(python, req, pip), dir, tee, signal, {}, box);
    if (code !== 0) {
      rmSync(venv, { recursive: true, force: true });
      const unreachable = pipIndexUnreachable(said, pip);
      throw new BuildFailure(`pip install -r requirements.txt exited with code ${code}\n${unreachable ? `${unreachable}\n` : ''}`, unreachable);
    }
    writeFileSync(join(venv, '.complete'), '');
    return python;
  }
}

/** Where a door's files appear inside the sandbox. */
export const DOOR_MOUNT = '/run/platform';

/**
 * The sandbox of a serverless instance with its own network namespace: the daemon's node runs
 * the door, which listens on the instance's directory (bound writable) and starts the command
 * (docs/decisions/serverless.md, Isolation).
 */
function behindDoor(door: DoorSpec, port: number, cmd: WorkloadCommand['start'], cwd: string, readOnly: string[]): { cmd: string; args: string[] } {
  const node = process.execPath;
  let nodeRoot: string[] = [];
  try {
    const real = realpathSync(node);
    if (!real.startsWith('/usr/')) nodeRoot = [dirname(dirname(real))];
  } catch {
    // the daemon's own binary: it exists
  }
  const args = [`${DOOR_MOUNT}/door.mjs`, '--dir', `${DOOR_MOUNT}/door`, '--bridge', `${DOOR_MOUNT}/bridge.sock`, '--port', String(port), '--platform', door.platformPorts.join(','), '--', cmd.cmd, ...cmd.args];
  return sandboxCommand({
    cmd: node,
    args,
    cwd,
    readOnly: [...readOnly, ...nodeRoot],
    mapped: [
      [door.script, `${DOOR_MOUNT}/door.mjs`],
      [door.bridge, `${DOOR_MOUNT}/bridge.sock`],
    ],
    mappedWritable: [[door.dir, `${DOOR_MOUNT}/door`]],
    privateNetwork: true,
  });
}

/** Kubernetes' rule: `command` replaces the whole command line, `args` only its arguments. */
function withOverrides(start: WorkloadCommand['start'], command?: string[], args?: string[]): WorkloadCommand['start'] {
  if (command?.length) return { ...start, cmd: command[0]!, args: [...command.slice(1), ...(args ?? [])] };
  if (args) return { ...start, args };
  return start;
}

/** sha256 over a directory's files (sorted relative paths and contents): a version's content address. */
export function treeDigest(dir: string): string {
  const files: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      const st = lstatSync(p);
      if (st.isDirectory()) walk(p);
      else if (st.isFile()) files.push(p);
    }
  };
  walk(dir);
  const h = createHash('sha256');
  for (const f of files.map((p) => relative(dir, p)).sort()) {
    const content = readFileSync(join(dir, f));
    h.update(`${f}\0${content.length}\0`).update(content);
  }
  return h.digest('hex');
}

/**
 * Python workloads import from their own directory (vendored packages travel with the source),
 * as Python buildpacks put the application directory on the path.
 */
function pythonPath(framework: string, runtime: string | undefined, dir: string): Record<string, string> {
  return isAgentFramework(framework) || runtime === 'python' || runtime === undefined ? { PYTHONPATH: dir } : {};
}

/** Settings of the daemon's environment a sandboxed build step keeps (package indexes, proxies). */
const BUILD_PASSTHROUGH = /^(PIP_|GOPROXY$|GOFLAGS$|GONOSUMDB$|GONOPROXY$|GOPRIVATE$|GOSUMDB$|HTTPS?_PROXY$|NO_PROXY$|https?_proxy$|no_proxy$|LANG$|LC_)/;

/**
 * Runs a build step in its own process group, streaming its output; resolves its exit code.
 * Sandboxed, it gets no more of the daemon's environment than BUILD_PASSTHROUGH.
 */
function run(cmd: string, args: string[], cwd: string, output: (c: string) => void, signal: AbortSignal, env: Record<string, string> = {}, box?: StepSandbox): Promise<number> {
  return new Promise((resolve) => {
    let child: ChildProcess;
    try {
      if (box) {
        const kept = Object.fromEntries(Object.entries(process.env).filter(([k]) => BUILD_PASSTHROUGH.test(k))) as Record<string, string>;
        const bins = box.readOnly.map((d) => join(d, 'bin')).filter((d) => !d.startsWith('/etc') && existsSync(d));
        const inner = sandboxCommand({ cmd, args, cwd, readOnly: box.readOnly, writable: box.writable, mapped: box.mapped });
        const stepEnv = { ...kept, PATH: sandboxPath(bins), HOME: '/tmp', PYTHONDONTWRITEBYTECODE: '1', ...env };
        child = spawn(inner.cmd, inner.args, { cwd: '/', env: stepEnv, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
      } else {
        child = spawn(cmd, args, { cwd, env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1', ...env }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
      }
    } catch (e) {
      output(`${(e as Error).message}\n`);
      return resolve(127);
    }
    const onAbort = () => child.pid && killGroup(child.pid, 'SIGKILL');
    signal.addEventListener('abort', onAbort, { once: true });
    child.stdout!.on('data', (c: Buffer) => output(c.toString('utf8')));
    child.stderr!.on('data', (c: Buffer) => output(c.toString('utf8')));
    child.on('error', (e) => {
      output(`${cmd}: ${e.message}\n`);
      resolve(127);
    });
    child.on('close', (code) => {
      signal.removeEventListener('abort', onAbort);
      resolve(code ?? 1);
    });
  });
}

function killGroup(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(-pid, sig);
  } catch {
    // already gone
  }
}

/**
 * Gives a tree to the sandbox's unprivileged user. lchown: a symbolic link in uploaded source
 * must not hand its target (say /etc/shadow) to that user.
 */
function chownTree(path: string): void {
  const st = lstatSync(path);
  if (st.uid !== SANDBOX_UID) lchownSync(path, SANDBOX_UID, SANDBOX_UID);
  if (st.isDirectory()) for (const name of readdirSync(path)) chownTree(join(path, name));
}

/** The shared Go cache: given to the sandbox's user once (it is large; a top-level check suffices). */
function ownCache(dir: string): void {
  if (statSync(dir).uid !== SANDBOX_UID) chownTree(dir);
}

function processInstance(child: ChildProcess, released?: () => Promise<void>): RunningInstance {
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => {
    child.on('exit', (code, signal) => resolve({ code, signal }));
    child.on('error', () => resolve({ code: 127, signal: null }));
  }).then(async (r) => {
    // The sandbox is gone with its first process; whatever the cgroup still holds goes too.
    await released?.().catch(() => undefined);
    return r;
  });
  return {
    pid: child.pid,
    stdout: child.stdout!,
    stderr: child.stderr!,
    exited,
    async stop() {
      if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) {
        if (child.pid) killGroup(child.pid, 'SIGKILL');
        return;
      }
      killGroup(child.pid, 'SIGTERM');
      const timer = setTimeout(() => child.pid && killGroup(child.pid, 'SIGKILL'), 2000);
      await exited;
      clearTimeout(timer);
      // Anything the shim left in its group goes too.
      killGroup(child.pid, 'SIGKILL');
    },
  };
}
