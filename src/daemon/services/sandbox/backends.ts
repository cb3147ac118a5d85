import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { assetsDir } from '../../runtimes/index.js';
import { instanceLimits, releaseCgroups } from '../../runtime/limits.js';
import { interpreterRoots } from '../../runtime/sandbox.js';
import { RUNNER_DIR, SANDBOX_ENV, SANDBOX_WORKDIR, bwrapArgs } from './bwrap.js';
import type { Launch } from './child.js';
import type { SandboxConfig } from './config.js';

/**
 * The two ways a sandbox is made (spec 2 §4.6): bubblewrap namespaces in a cgroup (process mode)
 * or a container with no network and a read-only root (docker mode). Both start the same Python
 * runners; the pool and the call code do not know which one they hold.
 */

const MiB = 1024 * 1024;
/** Spec 2 §8: each warm sandbox 1 CPU and 512 MiB; a tool sandbox 2 CPUs and 1 GiB. */
export const EXECUTE_LIMITS = { cpus: 1, memoryBytes: 512 * MiB };
export const TOOL_LIMITS = { cpus: 2, memoryBytes: 1024 * MiB };
/** Processes and threads in one sandbox: as a workload's cgroup (runtime/limits.ts). */
const PIDS_LIMIT = 512;

/** What /v1/call runs: a deployed revision's directory (process driver) or its image (docker driver). */
export interface ToolTarget {
  dir?: string;
  /** The revision's venv interpreter, when it has one. */
  python?: string;
  dockerImage?: string;
}

export interface Backend {
  kind: 'process' | 'docker';
  /** One line for logs and 503s: how sandboxes are isolated. */
  detail: string;
  warm(id: string): Launch;
  /** A one-use tool sandbox; a string is why this mode cannot run that target. */
  tool(id: string, target: ToolTarget, module: string): Launch | string;
}

export const runnerPath = (file: 'runner.py' | 'tool_runner.py') => join(assetsDir(), 'sandbox', file);

const bwrapBin = () => process.env.PLATFORM_BWRAP || (existsSync('/usr/bin/bwrap') ? '/usr/bin/bwrap' : 'bwrap');

/** Whether bubblewrap can make this sandbox here (an installed bwrap without namespaces cannot). */
export function probeBwrap(python: string): Promise<string | undefined> {
  if (process.env.PLATFORM_BWRAP && !existsSync(process.env.PLATFORM_BWRAP)) return Promise.resolve('bubblewrap (bwrap) is not installed');
  return new Promise((resolve) => {
    execFile(bwrapBin(), bwrapArgs({ cmd: python, args: ['-c', ''], readOnly: interpreterRoots(python) }), { timeout: 10_000, env: SANDBOX_ENV }, (err, _o, stderr) => {
      if (!err) return resolve(undefined);
      const why = (stderr || err.message).trim().split('\n').pop();
      resolve((err as NodeJS.ErrnoException).code === 'ENOENT' ? 'bubblewrap (bwrap) is not installed' : `bubblewrap cannot make a sandbox here (${why})`);
    });
  });
}

export function processBackend(config: SandboxConfig): Backend {
  const launch = (id: string, limits: typeof EXECUTE_LIMITS, spec: Parameters<typeof bwrapArgs>[0]): Launch => {
    const lim = instanceLimits(`sandbox-${id}`, limits, true);
    const { cmd, args } = lim.wrap(bwrapBin(), bwrapArgs(spec));
    return { cmd, args, env: SANDBOX_ENV, kill: () => (lim.kind === 'cgroup' ? releaseCgroups(`sandbox-${id}`) : Promise.resolve()), release: () => lim.release() };
  };
  return {
    kind: 'process',
    detail: 'bubblewrap: own PID, network, IPC and UTS namespaces, a tmpfs working directory, nobody, in a cgroup of 1 CPU and 512 MiB',
    warm: (id) =>
      launch(id, EXECUTE_LIMITS, {
        cmd: config.python,
        args: ['-I', `${RUNNER_DIR}/runner.py`],
        readOnly: interpreterRoots(config.python),
        mapped: [[runnerPath('runner.py'), `${RUNNER_DIR}/runner.py`]],
      }),
    tool: (id, target, module) => {
      if (!target.dir) return 'process mode runs tool calls from a revision built by the process driver; this revision is a Docker image';
      const python = target.python ?? config.python;
      return launch(id, TOOL_LIMITS, {
        cmd: python,
        args: ['-I', `${RUNNER_DIR}/tool_runner.py`, target.dir, module],
        readOnly: [target.dir, ...(target.python ? [dirname(dirname(target.python))] : []), ...interpreterRoots(python)],
        mapped: [[runnerPath('tool_runner.py'), `${RUNNER_DIR}/tool_runner.py`]],
      });
    },
  };
}

const dockerBin = () => process.env.PLATFORM_DOCKER_CLI || 'docker';

function dockerKill(name: string): Promise<void> {
  return new Promise((resolve) => {
    execFile(dockerBin(), ['rm', '-f', name], { timeout: 30_000 }, () => resolve());
  });
}

/**
 * Removes the containers a daemon of this state directory left (it was killed before it could):
 * each sandbox container carries its daemon's owner label, so other daemons' are untouched.
 */
export function removeLeftoverContainers(owner: string): Promise<void> {
  return new Promise((resolve) => {
    execFile(dockerBin(), ['ps', '-aq', '--filter', `label=platform.sandbox.owner=${owner}`], { timeout: 30_000 }, (err, out) => {
      const ids = err ? [] : out.split('\n').filter(Boolean);
      if (!ids.length) return resolve();
      execFile(dockerBin(), ['rm', '-f', ...ids], { timeout: 60_000 }, () => resolve());
    });
  });
}

/** The owner label of a state directory's sandbox containers. */
export const containerOwner = (home: string) => createHash('sha256').update(home).digest('hex').slice(0, 16);

export function dockerBackend(config: SandboxConfig, owner: string): Backend {
  const launch = (id: string, limits: typeof EXECUTE_LIMITS, image: string, mounts: string[], workdir: string | undefined, cmd: string[]): Launch => {
    const name = `platform-sandbox-${id}`;
    const args = [
      'run', '-i', '--rm', '--name', name, '--label', 'platform.sandbox=1', '--label', `platform.sandbox.owner=${owner}`,
      '--network', 'none', '--read-only', '--user', '65534:65534', '--cap-drop', 'ALL', '--security-opt', 'no-new-privileges',
      '--memory', String(limits.memoryBytes), '--memory-swap', String(limits.memoryBytes), '--cpus', String(limits.cpus), '--pids-limit', String(PIDS_LIMIT),
      // The writable places are tmpfs, counted in the container's memory.
      '--tmpfs', `${SANDBOX_WORKDIR}:rw,exec,mode=1777,size=256m`, '--tmpfs', '/tmp:rw,mode=1777,size=64m',
      '--log-driver', 'none', ...(workdir ? ['--workdir', workdir] : []),
      ...Object.entries(SANDBOX_ENV).flatMap(([k, v]) => ['-e', `${k}=${v}`]),
      ...mounts.flatMap((m) => ['-v', m]),
      image, ...cmd,
    ];
    let gone: Promise<void> | undefined;
    return {
      cmd: dockerBin(),
      args,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...(process.env.DOCKER_HOST ? { DOCKER_HOST: process.env.DOCKER_HOST } : {}), HOME: process.env.HOME ?? '/' },
      kill: () => (gone ??= dockerKill(name)),
      // A container the CLI lost track of (killed while it was being created) is removed too.
      release: () => dockerKill(name),
    };
  };
  return {
    kind: 'docker',
    detail: `docker: no network, read-only root, nobody, 1 CPU, 512 MiB, ${PIDS_LIMIT} processes (image ${config.image})`,
    warm: (id) => launch(id, EXECUTE_LIMITS, config.image, [`${runnerPath('runner.py')}:${RUNNER_DIR}/runner.py:ro`], undefined, ['python3', '-I', `${RUNNER_DIR}/runner.py`, SANDBOX_WORKDIR]),
    tool: (id, target, module) => {
      const mount = `${runnerPath('tool_runner.py')}:${RUNNER_DIR}/tool_runner.py:ro`;
      if (target.dockerImage) return launch(id, TOOL_LIMITS, target.dockerImage, [mount], '/workload', ['python3', '-I', `${RUNNER_DIR}/tool_runner.py`, '/workload', module]);
      return launch(id, TOOL_LIMITS, config.image, [mount, `${target.dir}:/agent:ro`], '/agent', ['python3', '-I', `${RUNNER_DIR}/tool_runner.py`, '/agent', module]);
    },
  };
}

/** Whether a Docker engine answers and has the image (no pulls: the daemon may be offline). */
export function probeDocker(image: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const p = spawn(dockerBin(), ['image', 'inspect', '--format', '{{.Id}}', image], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    p.stderr.on('data', (b: Buffer) => (err += b.toString()));
    p.once('error', () => resolve('Docker is not installed'));
    p.once('close', (code) => resolve(code === 0 ? undefined : /no such image/i.test(err) ? `the sandbox image ${image} is missing (set PLATFORM_SANDBOX_IMAGE)` : `no Docker engine answers (${err.trim().split('\n').pop()})`));
  });
}

/** A revision's artifact as a tool target: a directory (with its venv, if any) or an image id. */
export function toolTarget(artifact: string): ToolTarget {
  try {
    if (statSync(artifact).isDirectory()) {
      const marker = join(artifact, '.platform-python');
      return { dir: artifact, python: existsSync(marker) ? readFileSync(marker, 'utf8').trim() : undefined };
    }
  } catch {
    // not a path: an image
  }
  return { dockerImage: artifact };
}
