import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Spec 1 §8.4 limits for a process-driver instance: memory (request and limit), a CPU ceiling and
 * a process count. A cgroup (v1 memory, cpu, pids; or v2) per instance, nested under the
 * daemon's own so whatever bounds the daemon still bounds its workloads. Where no cgroup can be
 * made (no permission), rlimits: a process count, and an address-space cap only for runtimes
 * that do not reserve large virtual regions up front (Go and Node do, and would not start).
 */

/** Processes and threads one instance may have (docs/decisions/agents.md). */
export const PIDS_MAX = 512;
const CPU_PERIOD_US = 100_000;

export interface Limits {
  cpus: number;
  memoryBytes: number;
}

const V1 = ['memory', 'cpu', 'pids'] as const;

/** The daemon's own cgroup directory for a controller ('' for v2's unified tree), if writable. */
function ownDir(controller: string): string | undefined {
  let lines: string[];
  try {
    lines = readFileSync('/proc/self/cgroup', 'utf8').trim().split('\n');
  } catch {
    return undefined;
  }
  for (const line of lines) {
    const [, ctrls, path] = line.split(':', 3) as [string, string, string];
    const names = ctrls.split(',');
    if (controller === '' ? ctrls !== '' : !names.includes(controller)) continue;
    for (const mount of controller === '' ? ['/sys/fs/cgroup'] : [`/sys/fs/cgroup/${ctrls}`, `/sys/fs/cgroup/${controller}`]) {
      const dir = join(mount, path);
      if (existsSync(join(dir, 'cgroup.procs'))) return dir;
    }
  }
  return undefined;
}

const unified = () => existsSync('/sys/fs/cgroup/cgroup.controllers');

/** The cgroup directories an instance of this id would use (made or not). */
function dirsFor(instanceId: string): string[] {
  const name = `platform-${instanceId}`;
  if (unified()) {
    const own = ownDir('');
    return own ? [join(own, name)] : [];
  }
  return V1.map((c) => ownDir(c)).flatMap((d) => (d ? [join(d, name)] : []));
}

export interface InstanceLimits {
  kind: 'cgroup' | 'rlimit';
  /** Wraps the instance's command so it starts inside the limits. */
  wrap(cmd: string, args: string[]): { cmd: string; args: string[] };
  /** Kills what is left inside and removes the cgroup. */
  release(): Promise<void>;
}

/**
 * Makes the instance's cgroup and sets its limits; falls back to rlimits when any step fails.
 * `addressSpaceOk` says whether an address-space rlimit suits the runtime (not Go, not Node).
 */
export function instanceLimits(instanceId: string, limits: Limits, addressSpaceOk: boolean): InstanceLimits {
  const dirs = dirsFor(instanceId);
  const v2 = unified();
  const complete = v2 ? dirs.length === 1 : dirs.length === V1.length;
  if (complete) {
    try {
      for (const d of dirs) mkdirSync(d, { recursive: true });
      const quota = String(Math.round(limits.cpus * CPU_PERIOD_US));
      if (v2) {
        writeFileSync(join(dirs[0]!, 'memory.max'), String(limits.memoryBytes));
        writeFileSync(join(dirs[0]!, 'cpu.max'), `${quota} ${CPU_PERIOD_US}`);
        writeFileSync(join(dirs[0]!, 'pids.max'), String(PIDS_MAX));
      } else {
        const [mem, cpu, pids] = dirs as [string, string, string];
        writeFileSync(join(mem, 'memory.limit_in_bytes'), String(limits.memoryBytes));
        // Memory is the limit with swap too, where the kernel accounts swap.
        if (existsSync(join(mem, 'memory.memsw.limit_in_bytes'))) writeFileSync(join(mem, 'memory.memsw.limit_in_bytes'), String(limits.memoryBytes));
        writeFileSync(join(cpu, 'cpu.cfs_period_us'), String(CPU_PERIOD_US));
        writeFileSync(join(cpu, 'cpu.cfs_quota_us'), quota);
        writeFileSync(join(pids, 'pids.max'), String(PIDS_MAX));
      }
      return {
        kind: 'cgroup',
        // The shell joins the cgroups and then becomes the sandbox: nothing runs outside them.
        wrap: (cmd, args) => ({
          cmd: '/bin/sh',
          args: ['-c', `${dirs.map((d) => `echo $$ > '${join(d, 'cgroup.procs')}'`).join(' && ')} && exec "$@"`, 'sh', cmd, ...args],
        }),
        release: () => releaseCgroups(instanceId),
      };
    } catch {
      void releaseCgroups(instanceId);
    }
  }
  const rlimits = [`--nproc=${PIDS_MAX}`, ...(addressSpaceOk ? [`--as=${limits.memoryBytes}`] : [])];
  return {
    kind: 'rlimit',
    wrap: (cmd, args) => ({ cmd: 'prlimit', args: [...rlimits, '--', cmd, ...args] }),
    release: async () => undefined,
  };
}

/**
 * Kills every process left in an instance's cgroups and removes them (stop and reap). The
 * kernel empties a group within milliseconds of the kill; the wait never blocks the event loop.
 */
export async function releaseCgroups(instanceId: string): Promise<void> {
  for (const d of dirsFor(instanceId)) {
    for (let attempt = 0; attempt < 40 && existsSync(d); attempt++) {
      let pids: number[] = [];
      try {
        pids = readFileSync(join(d, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
      } catch {
        break;
      }
      for (const pid of pids) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
      try {
        rmdirSync(d);
      } catch {
        await new Promise((r) => setTimeout(r, 5));
      }
    }
  }
}

/** The kind of limits this machine gives instances, for the decisions record and tests. */
export function limitsKind(): 'cgroup' | 'rlimit' {
  return dirsFor('probe').length > 0 ? 'cgroup' : 'rlimit';
}
