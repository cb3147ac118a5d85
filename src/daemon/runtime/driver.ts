import type { Readable } from 'node:stream';

/** What a build needs: the stored source and what kind of workload it is. */
export interface BuildSpec {
  agentId: string;
  /** Revision name; the artifact is per revision and immutable once built. */
  revision: string;
  /** Image reference to record (digest-pinned by the caller). */
  image: string;
  framework: string;
  runtime?: string;
  files: { path: string; content: Buffer; mode: number }[];
  /** Where requirements.txt installs from: a local wheel folder instead of the index. */
  pip?: { findLinks?: string };
}

export interface Artifact {
  /** Driver-specific reference: a directory for `process`, an image id for `docker`. */
  ref: string;
  /** Content digest (`sha256:<hex>`) where the driver computes one (the `mcp` framework). */
  digest?: string;
  /** True when an identical artifact already existed and nothing was built. */
  reused?: boolean;
}

export interface StartSpec {
  instanceId: string;
  artifact: string;
  framework: string;
  runtime?: string;
  port: number;
  env: Record<string, string>;
  /** Spec 1 §8.4: memory is request and limit, CPU a ceiling. Docker enforces them; the process driver through a cgroup (limits.ts). */
  limits?: { cpus: number; memoryBytes: number };
  /**
   * Serverless services (framework `image`: a plain image; `server`: a folder's own server): no
   * shim; `command` replaces the entrypoint and `args` its arguments, as Kubernetes does.
   */
  command?: string[];
  args?: string[];
  /** Extra container labels, so a later daemon finds what this one left by label. */
  labels?: Record<string, string>;
  /**
   * Serverless instances (docs/decisions/serverless.md, Isolation): their own network namespace.
   * The process driver runs the command behind the door in it; the docker driver gives the
   * container no network (NetworkMode none) and the caller runs the door in its namespace.
   */
  door?: DoorSpec;
}

export interface DoorSpec {
  /** The door program (runtimes/door/door.mjs). */
  script: string;
  /** The instance's own directory: door.sock and probe.sock live there. */
  dir: string;
  /** The daemon's bridge socket. */
  bridge: string;
  /** The daemon's listeners the door serves as 127.0.0.1:<port> inside the namespace. */
  platformPorts: number[];
}

export interface RunningInstance {
  pid?: number;
  container?: string;
  stdout: Readable;
  stderr: Readable;
  /** Resolves when the instance stops for any reason. */
  exited: Promise<{ code: number | null; signal: string | null }>;
  /** Stops the instance and everything it started; resolves once it is gone. */
  stop(): Promise<void>;
}

/**
 * Thrown by a build that fails; `output` is appended to the build's output, `cause` (when the
 * driver knows it better than the output's last error line) heads the failure message.
 */
export class BuildFailure extends Error {
  constructor(
    readonly output: string,
    override readonly cause?: string,
  ) {
    super('build failed');
  }
}

/**
 * One interface, two drivers (DESIGN.md): build(source) -> artifact, start(artifact, env, port)
 * -> instance, stop, logs (the instance's stdout and stderr streams).
 */
export interface Driver {
  readonly name: 'process' | 'docker';
  build(spec: BuildSpec, output: (chunk: string) => void, signal: AbortSignal): Promise<Artifact>;
  start(spec: StartSpec): Promise<RunningInstance>;
  /** Stops what a previous daemon left running (found through the instances table). */
  reap(leftover: { id?: string; pid?: number | null; container?: string | null }): Promise<void>;
  /** Removes a revision's artifact once no revision refers to it. */
  discard(artifact: string): Promise<void>;
}
