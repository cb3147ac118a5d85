import { existsSync } from 'node:fs';
import { asSandboxUser, runsAsRoot, systemFiles } from '../../runtime/sandbox.js';

/**
 * The code sandbox's bubblewrap command line (spec 2 §4.6). Stricter than a workload's
 * (runtime/sandbox.ts): a network namespace of its own (so not even the daemon on loopback is
 * reachable), a new session, a private tmpfs working directory, and of /etc only what the
 * loader and user names need. Built here rather than by widening sandboxCommand, which the
 * workloads keep.
 */

/** Where the code runs: a tmpfs of its own, so nothing written survives the sandbox. */
export const SANDBOX_WORKDIR = '/work';
/** Where the runner scripts are bound, read-only. */
export const RUNNER_DIR = '/opt/platform-sandbox';

const ETC = ['/etc/ld.so.cache', '/etc/ld.so.conf', '/etc/ld.so.conf.d', '/etc/alternatives', '/etc/passwd', '/etc/group', '/etc/localtime', '/etc/nsswitch.conf', '/etc/mime.types'];

export interface BwrapSpec {
  cmd: string;
  args: string[];
  /** Host paths visible read-only at the same place (an interpreter outside /usr, an agent's revision). */
  readOnly?: string[];
  /** Host files visible read-only elsewhere: [host path, sandbox path]. */
  mapped?: Array<[string, string]>;
}

export function bwrapArgs(spec: BwrapSpec): string[] {
  const a = ['--die-with-parent', '--new-session', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-net', '--unshare-cgroup-try', '--hostname', 'sandbox'];
  if (!runsAsRoot()) a.push('--unshare-user', '--cap-drop', 'ALL');
  a.push('--proc', '/proc', '--dev', '/dev', '--perms', '1777', '--tmpfs', '/tmp', '--perms', '1777', '--tmpfs', '/dev/shm');
  a.push('--perms', '1777', '--tmpfs', SANDBOX_WORKDIR);
  const { made, parents } = systemFiles(a, ETC, [SANDBOX_WORKDIR]);
  for (const p of new Set(spec.readOnly ?? [])) {
    if (!existsSync(p) || p.startsWith('/usr/')) continue;
    parents(p);
    a.push('--ro-bind', p, p);
    made.add(p);
  }
  for (const [src, dest] of spec.mapped ?? []) {
    parents(dest);
    a.push('--ro-bind', src, dest);
  }
  a.push('--chdir', SANDBOX_WORKDIR);
  return [...a, '--', ...asSandboxUser(spec.cmd, spec.args)];
}

/** What the sandbox's processes see as their environment: nothing of the daemon's. */
export const SANDBOX_ENV: Record<string, string> = {
  PATH: '/usr/local/bin:/usr/bin:/bin',
  HOME: SANDBOX_WORKDIR,
  TMPDIR: '/tmp',
  LANG: 'C.UTF-8',
  PYTHONDONTWRITEBYTECODE: '1',
};
