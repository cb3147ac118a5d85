import type { InstancePaths } from './redis-conf.js';

/** What a driver needs to run one instance's server. */
export interface LaunchSpec {
  id: string;
  paths: InstancePaths;
  port: number;
  /** Container memory limit of the size class (the docker driver enforces it). */
  memoryLimitBytes: number;
}

/** A running server: a process id (process driver) or a container (docker driver). */
export interface ServerHandle {
  pid?: number;
  containerId?: string;
  /**
   * Settles with a description when the server stops by itself. Only servers this daemon
   * launched can be awaited; re-adopted ones are watched by polling `alive`.
   */
  exited?: Promise<string>;
}

/** One interface for both runtime drivers (DESIGN: process and docker). */
export interface CacheDriver {
  readonly name: 'process' | 'docker';
  launch(spec: LaunchSpec): Promise<ServerHandle>;
  /** A server still running for this instance from an earlier daemon, to re-adopt. */
  find(spec: LaunchSpec): Promise<ServerHandle | undefined>;
  alive(h: ServerHandle): Promise<boolean>;
  /** Graceful stop (SIGTERM: redis flushes the append-only file), then a hard kill after graceMs. */
  stop(h: ServerHandle, graceMs: number): Promise<void>;
  /** 'ok' when the driver can run servers now, else the reason (for /cache/healthz). */
  check(): Promise<string>;
  /** Version of the server this driver runs, e.g. 7.0.15; undefined when unknown. */
  serverVersion(): Promise<string | undefined>;
}

/** Last lines of a log file, to explain a failed start in the instance's message. */
export async function tail(file: string, lines = 3): Promise<string> {
  const { readFile } = await import('node:fs/promises');
  try {
    const text = await readFile(file, 'utf8');
    return text
      .trim()
      .split('\n')
      .slice(-lines)
      .map((l) => l.replace(/^\d+:[A-Z] [^#*-]*[#*-] ?/, '').trim())
      .filter(Boolean)
      .join('; ');
  } catch {
    return '';
  }
}
