import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { AGENT_FRAMEWORKS, agentHarnessCommand, resolvePython, runtimeCommand, type AgentFramework, type Runtime, type WorkloadCommand } from '../runtimes/index.js';
import { pipIndexUnreachable, pipInstallArgs, type PipSource } from './pip.js';
import { BuildFailure, type Artifact, type BuildSpec, type Driver, type RunningInstance, type StartSpec } from './driver.js';

const isAgentFramework = (f: string): f is AgentFramework => (AGENT_FRAMEWORKS as readonly string[]).includes(f);

/**
 * The default driver: the shim and the handler run as child processes on 127.0.0.1, each
 * instance in its own process group so stopping it stops everything it started. An artifact is
 * a directory holding the revision's source (plus whatever the runtime's build produced).
 */
export class ProcessDriver implements Driver {
  readonly name = 'process' as const;

  constructor(
    private readonly workloadsDir: string,
    private readonly cacheDir: string,
  ) {}

  async build(spec: BuildSpec, output: (chunk: string) => void, signal: AbortSignal): Promise<Artifact> {
    if (spec.framework === 'container') {
      throw new BuildFailure(
        'the container framework builds a Dockerfile and runs only under the docker driver; start the daemon with PLATFORM_DRIVER=docker, or deploy a function or agent framework instead\n',
      );
    }
    const dir = join(this.workloadsDir, spec.agentId, spec.revision);
    rmSync(dir, { recursive: true, force: true });
    for (const f of spec.files) {
      const target = join(dir, f.path);
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, f.content);
      chmodSync(target, f.mode & 0o755 | 0o600);
    }
    output(`source: ${spec.files.length} files written to ${spec.revision}\n`);
    const venv = await this.pythonEnv(dir, output, signal, spec.pip);
    const cmd = await this.commands(spec.framework, spec.runtime, dir, venv);
    await cmd.prepare?.(dir);
    if (cmd.build) {
      // The agent harness's build is its --check: a missing framework package fails here,
      // naming the line to add to requirements.txt.
      output(`$ ${cmd.build.cmd} ${cmd.build.args.join(' ')}\n`);
      const code = await run(cmd.build.cmd, cmd.build.args, cmd.build.cwd ?? dir, output, signal, { ...pythonPath(spec.framework, spec.runtime, dir), ...cmd.build.env });
      if (code !== 0) throw new BuildFailure(`build step exited with code ${code}\n`);
    }
    if (venv) writeFileSync(join(dir, '.platform-python'), venv);
    output('build finished\n');
    return { ref: dir };
  }

  async start(spec: StartSpec): Promise<RunningInstance> {
    const marker = join(spec.artifact, '.platform-python');
    const venvPython = existsSync(marker) ? readFileSync(marker, 'utf8') : undefined;
    const cmd = (await this.commands(spec.framework, spec.runtime, spec.artifact, venvPython)).start;
    const child = spawn(cmd.cmd, cmd.args, {
      cwd: cmd.cwd ?? spec.artifact,
      env: {
        // The machine's PATH so python3, node, go and ruby resolve; HOME for tools that want one.
        PATH: venvPython ? `${dirname(venvPython)}:${process.env.PATH ?? ''}` : (process.env.PATH ?? '/usr/bin:/bin'),
        HOME: spec.artifact,
        ...pythonPath(spec.framework, spec.runtime, spec.artifact),
        ...cmd.env,
        ...spec.env,
        PORT: String(spec.port),
      },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return processInstance(child);
  }

  async reap(leftover: { pid?: number | null }): Promise<void> {
    if (!leftover.pid) return;
    killGroup(leftover.pid, 'SIGKILL');
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
    return runtimeCommand((runtime ?? 'python') as Runtime, dir, opts);
  }

  /**
   * Python dependencies: requirements.txt installs into a virtual environment that sees the
   * system's site packages, cached by the file's hash so an unchanged file costs nothing.
   */
  private async pythonEnv(dir: string, output: (c: string) => void, signal: AbortSignal, pip?: PipSource): Promise<string | undefined> {
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
    const code = await run('python3', pipInstallArgs(python, req, pip), dir, tee, signal);
    if (code !== 0) {
      rmSync(venv, { recursive: true, force: true });
      const unreachable = pipIndexUnreachable(said, pip);
      throw new BuildFailure(`pip install -r requirements.txt exited with code ${code}\n${unreachable ? `${unreachable}\n` : ''}`, unreachable);
    }
    writeFileSync(join(venv, '.complete'), '');
    return python;
  }
}

/**
 * Python workloads import from their own directory (vendored packages travel with the source),
 * as Python buildpacks put the application directory on the path.
 */
function pythonPath(framework: string, runtime: string | undefined, dir: string): Record<string, string> {
  return isAgentFramework(framework) || runtime === 'python' || runtime === undefined ? { PYTHONPATH: dir } : {};
}

/** Runs a build step in its own process group, streaming its output; resolves its exit code. */
function run(cmd: string, args: string[], cwd: string, output: (c: string) => void, signal: AbortSignal, env: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve) => {
    let child: ChildProcess;
    try {
      child = spawn(cmd, args, { cwd, env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1', ...env }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
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

function processInstance(child: ChildProcess): RunningInstance {
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => {
    child.on('exit', (code, signal) => resolve({ code, signal }));
    child.on('error', () => resolve({ code: 127, signal: null }));
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
