import type Docker from 'dockerode';
import { loadDockerode, loadTar } from '../lazy/modules.js';
import { chmodSync, cpSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PassThrough } from 'node:stream';
import { agentHarnessCommand, mcpServerCommand, runtimeCommand, type AgentFramework, type Runtime, type WorkloadCommand } from '../runtimes/index.js';
import { PIP_FAST_FAIL, pipIndexUnreachable, type PipSource } from './pip.js';
import { BuildFailure, type Artifact, type BuildSpec, type Driver, type RunningInstance, type StartSpec } from './driver.js';

const WORKDIR = '/workload';
/** Containers run as nobody (issue 16): the image's files are made world-readable, not theirs. */
const CONTAINER_USER = '65534:65534';
/** Processes and threads per container, as the process driver's cgroup (limits.ts). */
const PIDS_LIMIT = 512;

const quote = (s: string) => JSON.stringify(s);

/**
 * The docker driver (DESIGN.md): one image per revision built from a configurable base image per
 * runtime, containers on the host network with a PORT variable, never addressed by bridge IP
 * (serverless instances with a door: no network at all, the door is their way in and out).
 * The runtimes module prepares the workload (copies its shim in) on the host; its commands for
 * `/workload` then run unchanged inside the container.
 */
export class DockerDriver implements Driver {
  readonly name = 'docker' as const;
  private readonly docker = new (loadDockerode())();

  constructor(private readonly baseImages: Record<Runtime, string>) {}

  /** True when a Docker engine answers; used by the daemon's driver choice and by tests. */
  static async available(): Promise<boolean> {
    try {
      await new (loadDockerode())().ping();
      return true;
    } catch {
      return false;
    }
  }

  async build(spec: BuildSpec, output: (chunk: string) => void, signal: AbortSignal): Promise<Artifact> {
    if (!(await DockerDriver.available())) {
      throw new BuildFailure('the docker driver needs a Docker engine and none answers: start dockerd, or run the daemon with the process driver (the default)\n');
    }
    const context = mkdtempSync(join(tmpdir(), 'platform-image-'));
    try {
      for (const f of spec.files) {
        const target = join(context, 'src', f.path);
        mkdirSync(dirname(target), { recursive: true });
        writeFileSync(target, f.content, { mode: (f.mode & 0o755) | 0o600 });
      }
      mkdirSync(join(context, 'src'), { recursive: true });
      let dockerfile: string;
      if (spec.framework === 'container') {
        if (!spec.files.some((f) => f.path === 'Dockerfile')) throw new BuildFailure('the container framework needs a Dockerfile at the top of the source\n');
        cpSync(join(context, 'src'), join(context, 'ctx'), { recursive: true });
        // The daemon's umask 077 would leave COPY'd files unreadable to a container run as nobody.
        readableTree(join(context, 'ctx'));
        dockerfile = 'Dockerfile';
      } else {
        const runtime = (spec.runtime ?? 'python') as Runtime;
        // Agents and MCP servers (the tool runtime: tools/<tool>.py, tools.json) run on the python base.
        const isAgent = spec.framework !== 'function';
        const cmds: WorkloadCommand =
          spec.framework === 'mcp' ? mcpServerCommand(WORKDIR, { python: 'python3' }) : isAgent ? agentHarnessCommand(spec.framework as AgentFramework, WORKDIR) : runtimeCommand(runtime, WORKDIR);
        cpSync(join(context, 'src'), join(context, 'ctx', 'workload'), { recursive: true });
        await cmds.prepare?.(join(context, 'ctx', 'workload'));
        readableTree(join(context, 'ctx', 'workload'));
        const base = this.baseImages[isAgent ? 'python' : runtime];
        // As under the process driver, python workloads import from their own directory.
        // Base images carry no C compiler: Go builds pure Go there whatever the host has.
        const env = { PYTHONUNBUFFERED: '1', ...(isAgent || runtime === 'python' ? { PYTHONPATH: WORKDIR } : {}), ...cmds.build?.env, ...cmds.start.env, ...(runtime === 'go' && !isAgent ? { CGO_ENABLED: '0' } : {}) };
        const needsPip = spec.files.some((f) => f.path === 'requirements.txt') && (isAgent || runtime === 'python');
        const lines = [
          `FROM ${base}`,
          `COPY workload ${WORKDIR}`,
          `WORKDIR ${WORKDIR}`,
          ...Object.entries(env).map(([k, v]) => `ENV ${k}=${JSON.stringify(v)}`),
          ...(needsPip ? pipLines(context, spec.pip) : []),
          ...(cmds.build ? [`RUN [${[cmds.build.cmd, ...cmds.build.args].map(quote).join(', ')}]`] : []),
          `CMD [${[cmds.start.cmd, ...cmds.start.args].map(quote).join(', ')}]`,
        ];
        writeFileSync(join(context, 'ctx', 'Dockerfile'), lines.join('\n') + '\n');
        dockerfile = 'Dockerfile';
      }
      const tag = spec.framework === 'mcp' ? spec.image : `platform-${spec.agentId.slice(0, 8)}:${spec.revision.slice(0, 12)}`;
      const tarStream = loadTar().c({ cwd: join(context, 'ctx'), gzip: false }, ['.']);
      let said = '';
      const stream = await this.docker.buildImage(tarStream as unknown as NodeJS.ReadableStream, { t: tag, dockerfile, abortSignal: signal } as Docker.ImageBuildOptions);
      await new Promise<void>((resolve, reject) => {
        this.docker.modem.followProgress(
          stream,
          (err: Error | null, res: Array<{ error?: string }>) => {
            const failed = err?.message ?? res?.find((r) => r.error)?.error;
            const unreachable = failed ? pipIndexUnreachable(said, spec.pip) : undefined;
            if (failed) reject(new BuildFailure(`${failed}\n${unreachable ? `${unreachable}\n` : ''}`, unreachable));
            else resolve();
          },
          (ev: { stream?: string; error?: string }) => {
            const text = ev.stream ?? (ev.error ? `${ev.error}\n` : '');
            said = (said + text).slice(-16_384);
            output(text);
          },
        );
      });
      if (spec.framework === 'mcp') {
        // An MCP version is pinned to the image itself: its id is the digest Docker reports, and
        // rollback starts containers from that id whatever the tag points at later.
        const id = (await this.docker.getImage(tag).inspect()).Id;
        return { ref: id, digest: id };
      }
      return { ref: tag };
    } finally {
      rmSync(context, { recursive: true, force: true });
    }
  }

  async start(spec: StartSpec): Promise<RunningInstance> {
    // Platform-built images write nothing outside /tmp, so their root is read-only; a user's own
    // Dockerfile (the container framework) may write where it likes, still as nobody.
    const plain = spec.framework === 'image';
    const ours = spec.framework !== 'container' && !plain;
    const container = await this.docker.createContainer({
      Image: spec.artifact,
      name: `platform-${spec.instanceId}`,
      User: plain ? await this.imageUser(spec.artifact) : CONTAINER_USER,
      Env: Object.entries({ ...(plain ? {} : { HOME: '/tmp' }), ...spec.env, PORT: String(spec.port) }).map(([k, v]) => `${k}=${v}`),
      // A plain image (serverless services) keeps its entrypoint and command unless overridden.
      ...(spec.command?.length ? { Entrypoint: spec.command } : {}),
      ...(spec.args ? { Cmd: spec.args } : {}),
      HostConfig: {
        // A serverless instance's namespace has only lo: the daemon's door is its way in and out.
        NetworkMode: spec.door ? 'none' : 'host',
        // Its own namespace: its non-root user may bind any port there (a container_port of 80).
        ...(spec.door ? { Sysctls: { 'net.ipv4.ip_unprivileged_port_start': '0' } } : {}),
        // Removed on exit by this driver (below), not by the engine: the exit code is read first.
        AutoRemove: false,
        CapDrop: ['ALL'],
        SecurityOpt: ['no-new-privileges'],
        PidsLimit: PIDS_LIMIT,
        ReadonlyRootfs: ours,
        Tmpfs: { '/tmp': 'rw,nosuid,nodev,size=268435456' },
        ...(spec.limits ? { Memory: spec.limits.memoryBytes, NanoCpus: Math.round(spec.limits.cpus * 1e9) } : {}),
      },
      Labels: { ...spec.labels, 'platform.instance': spec.instanceId },
    });
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    const logs = await container.attach({ stream: true, stdout: true, stderr: true });
    this.docker.modem.demuxStream(logs, stdout, stderr);
    logs.on('end', () => {
      stdout.end();
      stderr.end();
    });
    await container.start();
    // A container that exits for any reason (a crash too) is removed once its code is known.
    const exited = container
      .wait()
      .then((r: { StatusCode: number }) => ({ code: r.StatusCode, signal: null }))
      .catch(() => ({ code: null, signal: 'SIGKILL' }))
      .then(async (r: { code: number | null; signal: string | null }) => {
        await container.remove({ force: true }).catch(() => undefined);
        return r;
      });
    return {
      container: container.id,
      stdout,
      stderr,
      exited,
      async stop() {
        await container.stop({ t: 2 }).catch(() => undefined);
        await exited;
        await container.remove({ force: true }).catch(() => undefined);
      },
    };
  }

  /**
   * The user a plain image runs as (docs/decisions/serverless.md, Data plane): its own USER when
   * that is not root, else nobody, as every other container of the platform.
   */
  private async imageUser(image: string): Promise<string> {
    const user = ((await this.docker.getImage(image).inspect()).Config?.User ?? '').trim();
    return user && !/^(root|0)(:.*)?$/.test(user) ? user : CONTAINER_USER;
  }

  /** The host pid of a running container's first process (its namespaces are /proc/<pid>/ns/*). */
  async pidOf(container: string): Promise<number> {
    const pid = (await this.docker.getContainer(container).inspect()).State?.Pid;
    if (!pid) throw new Error('the container is not running');
    return pid;
  }

  async reap(leftover: { container?: string | null }): Promise<void> {
    if (!leftover.container) return;
    await this.docker.getContainer(leftover.container).remove({ force: true }).catch(() => undefined);
  }

  async discard(artifact: string): Promise<void> {
    await this.docker.getImage(artifact).remove({ force: true }).catch(() => undefined);
  }
}

/** Directories 0755 and files at least 0644 in the image: readable by the container's user. */
function readableTree(path: string): void {
  const st = lstatSync(path);
  if (st.isSymbolicLink()) return;
  if (st.isDirectory()) {
    chmodSync(path, 0o755);
    for (const name of readdirSync(path)) readableTree(join(path, name));
  } else {
    chmodSync(path, (st.mode & 0o755) | 0o644);
  }
}

/**
 * The image's pip step, as under the process driver: from the daemon's wheel folder (copied into
 * the build context) without an index, else from the index with a short timeout so an unreachable
 * one fails in seconds and says so (pip.ts).
 */
function pipLines(context: string, source: PipSource = {}): string[] {
  if (!source.findLinks) return [`RUN python3 -m pip install --no-input ${PIP_FAST_FAIL} -r requirements.txt`];
  cpSync(source.findLinks, join(context, 'ctx', 'platform-wheels'), { recursive: true });
  return ['COPY platform-wheels /tmp/platform-wheels', 'RUN python3 -m pip install --no-input --no-index --find-links /tmp/platform-wheels -r requirements.txt'];
}
