import { join } from 'node:path';
import { SERVER_ENTRIES } from '../../../../api/serverless.js';
import type { WorkloadConfig } from '../../../config.js';
import { loadDockerode } from '../../../lazy/modules.js';
import { BuildFailure, type RunningInstance } from '../../../runtime/driver.js';
import { DockerDriver } from '../../../runtime/docker-driver.js';
import { ProcessDriver } from '../../../runtime/process-driver.js';
import { detectServerRuntime, type Runtime } from '../../../runtimes/index.js';
import type { RevisionTemplate } from '../plane.js';
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

  async start(t: RevisionTemplate, instanceId: string, port: number): Promise<{ driver: 'docker' | 'process'; run: RunningInstance }> {
    const a = await this.prepare(t);
    const env = { ...t.env, K_SERVICE: t.service, K_CONFIGURATION: t.service, K_REVISION: t.revision };
    const limits = { cpus: t.cpus, memoryBytes: t.memoryBytes };
    if (a.driver === 'docker') {
      this.beforeContainer?.();
      const run = await this.dockerDriver().start({
        instanceId,
        artifact: a.ref,
        framework: 'image',
        port,
        env,
        limits,
        command: t.command,
        args: t.args,
        labels: { [OWNER_LABEL]: this.owner, 'platform.serverless.revision': t.revision },
      });
      return { driver: 'docker', run };
    }
    const run = await this.process.start({ instanceId, artifact: a.ref, framework: 'server', runtime: a.runtime, port, env, limits, command: t.command, args: t.args });
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
