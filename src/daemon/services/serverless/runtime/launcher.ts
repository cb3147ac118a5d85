import { join } from 'node:path';
import { SERVER_ENTRIES } from '../../../../api/serverless.js';
import type { WorkloadConfig } from '../../../config.js';
import { loadDockerode } from '../../../lazy/modules.js';
import { BuildFailure, type RunningInstance } from '../../../runtime/driver.js';
import { DockerDriver } from '../../../runtime/docker-driver.js';
import { ProcessDriver } from '../../../runtime/process-driver.js';
import { privateNetworkUnavailable } from '../../../runtime/sandbox.js';
import { detectServerRuntime, doorScript, type Runtime } from '../../../runtimes/index.js';
import type { RevisionTemplate } from '../plane.js';
import type { Bridge } from './bridge.js';
import { hostDoorUnavailable, startHostDoor, type DoorDir, type Doors } from './doors.js';
import { OWNER_LABEL, ownerValue } from './ledger.js';

export interface SourceFile {
  path: string;
  content: Buffer;
  mode: number;
}

/** Reads the files of an uploaded source folder by its reference (the control plane stores them). */
export type SourceReader = (ref: string) => Promise<SourceFile[]>;

/** `source.platform.local/<short>/sha256-<hex>`: a folder uploaded with `services deploy DIR`. */
const SOURCE_RE = /^source\.platform\.local\/([a-z][a-z0-9]{5})\/sha256-([0-9a-f]{64})$/;
export const isSourceRef = (image: string) => SOURCE_RE.test(image);

/** Why a revision cannot run; `reason` is the revision's reason word, `message` the sentence. */
export class LaunchFailure extends Error {
  constructor(
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

/** How a revision's instances are networked (the VisibilityEnforced condition reads it). */
export type NetworkPlan = { isolated: true } | { isolated: false; message: string };

/** Where an instance listens: behind its door (own namespace), or on a host loopback port. */
export type Endpoint = { door: DoorDir; port?: undefined } | { port: number; door?: undefined };

/** What isolated instances need from the data plane. */
export interface Isolation {
  doors: Doors;
  bridge: Bridge;
  /** The daemon's main and internal ports, once it listens. */
  platformPorts(): Promise<number[]>;
}

/** The proxy the door serves inside the namespace; loopback stays direct (the door serves the platform there). */
const PROXY_ENV = {
  HTTP_PROXY: 'http://127.0.0.1:3128',
  HTTPS_PROXY: 'http://127.0.0.1:3128',
  http_proxy: 'http://127.0.0.1:3128',
  https_proxy: 'http://127.0.0.1:3128',
  NO_PROXY: 'localhost,127.0.0.1,::1',
  no_proxy: 'localhost,127.0.0.1,::1',
  NODE_USE_ENV_PROXY: '1',
};

const HOST_PORT = 'instances listen on a host loopback port that any local process can reach';

interface Prepared {
  driver: 'docker' | 'process';
  ref: string;
  runtime?: Runtime;
}

/**
 * Turns a revision's image into something a driver starts, and starts instances of it: a docker
 * reference runs as a plain image on the docker driver (pulled when the engine lacks it); a
 * source reference is built once per content address on the process driver (sandboxed like
 * functions) and runs the folder's own server.
 */
export class Launcher {
  private docker?: DockerDriver;
  readonly process: ProcessDriver;
  private readonly prepared = new Map<string, Promise<Prepared>>();
  private readonly owner: string;
  /** Called before a container is created (the ledger's marker). */
  beforeContainer?: () => void;

  constructor(
    home: string,
    private readonly w: WorkloadConfig,
    private readonly readSource?: SourceReader,
    private readonly isolation?: Isolation,
  ) {
    this.process = new ProcessDriver(join(home, 'workloads'), join(home, 'cache'), w.isolation);
    this.owner = ownerValue(home);
  }

  dockerDriver(): DockerDriver {
    return (this.docker ??= new DockerDriver(this.w.dockerImages));
  }

  /** The artifact of a revision's image; a failure is not remembered, so the next try starts over. */
  prepare(t: RevisionTemplate): Promise<Prepared> {
    let p = this.prepared.get(t.image);
    if (!p) {
      p = isSourceRef(t.image) ? this.build(t.image) : this.pull(t.image);
      this.prepared.set(t.image, p);
      p.catch(() => this.prepared.delete(t.image));
    }
    return p;
  }

  /**
   * Whether a revision's instances get their own network namespace (docs/decisions/serverless.md,
   * Isolation): source folders under bubblewrap, images when the daemon is root (it enters the
   * container's namespace); otherwise, and with --isolation none, a host port as before.
   */
  async network(t: RevisionTemplate): Promise<NetworkPlan> {
    if (!this.isolation) return { isolated: false, message: `this data plane runs without doors: ${HOST_PORT}` };
    let why: string | undefined;
    if (isSourceRef(t.image)) {
      why = this.w.isolation === 'none' ? 'the daemon runs with --isolation none' : await privateNetworkUnavailable();
    } else {
      why = hostDoorUnavailable();
    }
    why ??= this.isolation.doors.unusable();
    return why ? { isolated: false, message: `${why}: ${HOST_PORT}` } : { isolated: true };
  }

  async start(
    t: RevisionTemplate,
    instanceId: string,
    at: Endpoint,
    log: (line: string) => void,
  ): Promise<{ driver: 'docker' | 'process'; run: RunningInstance; doorPid?: number }> {
    const a = await this.prepare(t);
    // Behind a door PORT is the revision's own container_port: every instance has its own namespace.
    const port = at.door ? t.port : at.port;
    const env = { ...t.env, K_SERVICE: t.service, K_CONFIGURATION: t.service, K_REVISION: t.revision, ...(at.door ? PROXY_ENV : {}) };
    const limits = { cpus: t.cpus, memoryBytes: t.memoryBytes };
    const iso = this.isolation;
    const door = at.door && iso ? { script: doorScript(), dir: at.door.dir, bridge: iso.bridge.path, platformPorts: await iso.platformPorts() } : undefined;
    if (a.driver === 'docker') {
      this.beforeContainer?.();
      const driver = this.dockerDriver();
      const run = await driver.start({
        instanceId,
        artifact: a.ref,
        framework: 'image',
        port,
        env,
        limits,
        command: t.command,
        args: t.args,
        labels: { [OWNER_LABEL]: this.owner, 'platform.serverless.revision': t.revision },
        door,
      });
      if (!door || !at.door || !iso) return { driver: 'docker', run };
      let nsPid: number;
      try {
        nsPid = await driver.pidOf(run.container!);
      } catch {
        // Exited already: its exit code says why (the readiness wait sees the exit).
        return { driver: 'docker', run };
      }
      let hostDoor: Awaited<ReturnType<typeof startHostDoor>>;
      try {
        hostDoor = await startHostDoor(nsPid, at.door, iso.bridge.dir, port, door.platformPorts, (l) => log(`door: ${l.trimEnd()}`));
      } catch (e) {
        await run.stop();
        throw e;
      }
      // No door, no way in: the container stops with it.
      void hostDoor.exited.then(() => run.stop());
      return {
        driver: 'docker',
        doorPid: hostDoor.pid,
        run: {
          ...run,
          exited: run.exited.then(async (r) => {
            await hostDoor.stop();
            return r;
          }),
          async stop() {
            await run.stop();
            await hostDoor.stop();
          },
        },
      };
    }
    const run = await this.process.start({ instanceId, artifact: a.ref, framework: 'server', runtime: a.runtime, port, env, limits, command: t.command, args: t.args, door });
    return { driver: 'process', run };
  }

  /** Containers a previous daemon of this state directory left, found by label. */
  async leftoverContainers(): Promise<string[]> {
    if (!(await DockerDriver.available())) return [];
    const docker = new (loadDockerode())();
    const list = await docker.listContainers({ all: true, filters: JSON.stringify({ label: [`${OWNER_LABEL}=${this.owner}`] }) });
    return list.map((c) => c.Id);
  }

  private async pull(image: string): Promise<Prepared> {
    if (!(await DockerDriver.available())) {
      throw new LaunchFailure('DockerUnavailable', `image ${image} needs a Docker engine and none answers: start dockerd, or deploy a source folder (platform services deploy DIR)`);
    }
    const docker = new (loadDockerode())();
    const present = await docker
      .getImage(image)
      .inspect()
      .then(() => true)
      .catch(() => false);
    if (present) return { driver: 'docker', ref: image };
    try {
      const stream = await docker.pull(image);
      await new Promise<void>((resolve, reject) => {
        docker.modem.followProgress(stream, (err: Error | null, res: Array<{ error?: string }>) => {
          const failed = err?.message ?? res?.find((r) => r.error)?.error;
          if (failed) reject(new Error(failed));
          else resolve();
        });
      });
    } catch (e) {
      const why = ((e as { json?: { message?: string } }).json?.message ?? (e as Error).message).trim();
      throw new LaunchFailure('ImagePullFailed', `failed to pull image ${image}: ${why}`);
    }
    return { driver: 'docker', ref: image };
  }

  private async build(ref: string): Promise<Prepared> {
    if (!this.readSource) throw new LaunchFailure('SourceMissing', `source ${ref} cannot be read by this daemon`);
    let files: SourceFile[];
    try {
      files = await this.readSource(ref);
    } catch (e) {
      throw new LaunchFailure('SourceMissing', `source ${ref} cannot be read: ${(e as Error).message}`);
    }
    const runtime = detectServerRuntime(files.map((f) => f.path));
    if (!runtime) {
      throw new LaunchFailure('BuildFailed', `the folder has no server to start: looked for ${SERVER_ENTRIES.map((e) => `${e.looksFor} (${e.runtime})`).join(', ')}`);
    }
    let output = '';
    const hex = SOURCE_RE.exec(ref)![2]!;
    try {
      const spec = { agentId: 'serverless', revision: `sha256-${hex}`, image: ref, framework: 'server', runtime, files, pip: this.w.pip };
      const built = await this.process.build(spec, (c) => (output = (output + c).slice(-16_384)), new AbortController().signal);
      return { driver: 'process', ref: built.ref, runtime };
    } catch (e) {
      const tail = output.trim().split('\n').slice(-5).join('\n');
      const cause = e instanceof BuildFailure ? (e.cause ?? tail) : (e as Error).message;
      throw new LaunchFailure('BuildFailed', `building ${runtime} source ${ref} failed: ${cause || tail}`);
    }
  }
}
