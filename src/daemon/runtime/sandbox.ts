import { execFile } from 'node:child_process';
import { existsSync, lstatSync, readFileSync, readlinkSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';

/**
 * The process driver's sandbox (issue 16 §1): every instance and every build step that runs user
 * code runs under bubblewrap, seeing only /usr (the language runtimes), a few files of /etc, the
 * paths it is given (its revision read-only), a private /tmp and its own PID namespace. The
 * network namespace is the host's (workloads reach the daemon, caches and brokers on 127.0.0.1),
 * except for serverless instances, which get their own (`privateNetwork`) and a door.
 */

/** `sandbox` (default) runs workloads under bubblewrap; `none` is the explicit opt-out. */
export type IsolationMode = 'sandbox' | 'none';

export interface IsolationStatus {
  /**
   * How workloads are isolated: `bubblewrap`, `none` (opted out), `unavailable` (the process
   * driver refuses to start workloads), or `docker` (the docker driver's containers).
   */
  state: 'bubblewrap' | 'none' | 'unavailable' | 'docker';
  /** One sentence for the log line and `platform daemon status`. */
  detail: string;
}

/** The unprivileged user a root daemon's workloads run as (Debian's nobody). */
export const SANDBOX_UID = 65534;
export const runsAsRoot = () => process.getuid?.() === 0;

export const INSTALL_HINT = 'install bubblewrap (apt-get install bubblewrap) or start the daemon with --isolation none (PLATFORM_ISOLATION=none) to run workloads unsandboxed';

export function isolationModeFromEnv(env: NodeJS.ProcessEnv): IsolationMode {
  return (env.PLATFORM_ISOLATION ?? '').toLowerCase() === 'none' ? 'none' : 'sandbox';
}

function onPath(bin: string): string | undefined {
  for (const d of (process.env.PATH ?? '/usr/bin:/bin').split(delimiter)) {
    if (d && existsSync(join(d, bin))) return join(d, bin);
  }
  return ['/usr/bin', '/bin'].map((d) => join(d, bin)).find((p) => existsSync(p));
}

/** bwrap: PLATFORM_BWRAP names it where it is not on PATH (a path that does not exist means none). */
function bwrapPath(): string | undefined {
  const set = process.env.PLATFORM_BWRAP;
  if (set) return existsSync(set) ? set : undefined;
  return onPath('bwrap');
}

let probed: Promise<IsolationStatus> | undefined;

/** The daemon's isolation as `daemon status` and the start-up log line report it. */
export function workloadIsolation(w: { driver: 'process' | 'docker'; isolation: IsolationMode }): Promise<IsolationStatus> {
  if (w.driver === 'docker') {
    return Promise.resolve({ state: 'docker', detail: 'docker containers: a non-root user, no state directory, all capabilities dropped' });
  }
  return isolationStatus(w.isolation);
}

/**
 * Whether workloads can be sandboxed here, found once per daemon by running an empty sandbox: a
 * bwrap that is installed but cannot create namespaces (a container without user namespaces)
 * counts as missing, so the refusal and the status say so instead of every start failing.
 */
export function isolationStatus(mode: IsolationMode): Promise<IsolationStatus> {
  if (mode === 'none') {
    return Promise.resolve({ state: 'none', detail: "off (--isolation none): workloads run unsandboxed as the daemon's user and can read its state directory" });
  }
  probed ??= new Promise((resolvePromise) => {
    const bwrap = bwrapPath();
    if (!bwrap) return resolvePromise({ state: 'unavailable', detail: `bubblewrap (bwrap) is not installed, so workloads cannot be sandboxed: ${INSTALL_HINT}` });
    const { cmd, args } = sandboxCommand({ cmd: '/usr/bin/true', args: [], cwd: '/' });
    execFile(cmd, args, { timeout: 10_000 }, (err, _out, stderr) => {
      if (!err) return resolvePromise({ state: 'bubblewrap', detail: `bubblewrap (${bwrap}): each workload sees only its revision, the runtimes and a private /tmp` });
      const why = (stderr || err.message).trim().split('\n').pop();
      resolvePromise({ state: 'unavailable', detail: `bubblewrap (${bwrap}) cannot create a sandbox here (${why}): ${INSTALL_HINT}` });
    });
  });
  return probed;
}

export interface SandboxSpec {
  cmd: string;
  args: string[];
  cwd: string;
  /** Host paths visible read-only at the same place (the revision, a venv, the interpreter). */
  readOnly?: string[];
  /** Host paths visible writable at the same place (a build's output and caches). */
  writable?: string[];
  /** Host files visible read-only elsewhere: [host path, sandbox path]. */
  mapped?: Array<[string, string]>;
  /** Host directories visible writable elsewhere: [host path, sandbox path]. */
  mappedWritable?: Array<[string, string]>;
  /**
   * Its own network namespace with only `lo` (serverless instances: the door is the way in and
   * out, docs/decisions/serverless.md, Isolation).
   */
  privateNetwork?: boolean;
}

/** Files of /etc the runtimes read (loader cache, name resolution, TLS roots, user names). */
const ETC = [
  '/etc/ld.so.cache',
  '/etc/ld.so.conf',
  '/etc/ld.so.conf.d',
  '/etc/alternatives',
  '/etc/ssl/certs',
  '/etc/ssl/openssl.cnf',
  '/etc/ca-certificates',
  '/etc/resolv.conf',
  '/etc/hosts',
  '/etc/host.conf',
  '/etc/gai.conf',
  '/etc/nsswitch.conf',
  '/etc/passwd',
  '/etc/group',
  '/etc/localtime',
  '/etc/mime.types',
  '/etc/protocols',
  '/etc/services',
  '/etc/os-release',
];

/**
 * The bwrap command line that runs spec.cmd in a sandbox. A root daemon's workloads drop to
 * uid 65534 through setpriv inside it (bwrap's own --uid would need a user namespace whose
 * 65534 maps back to root, which keeps root's file ownership); a non-root daemon's bwrap makes
 * the user namespace itself and keeps the user's uid.
 */
export function sandboxCommand(spec: SandboxSpec): { cmd: string; args: string[] } {
  const a: string[] = ['--die-with-parent', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try', '--proc', '/proc', '--dev', '/dev'];
  if (spec.privateNetwork) a.push('--unshare-net');
  if (!runsAsRoot()) a.push('--unshare-user', '--cap-drop', 'ALL');
  // /dev/shm is the POSIX semaphores' and shared memory's home (Python's multiprocessing locks).
  a.push('--perms', '1777', '--tmpfs', '/tmp', '--perms', '1777', '--tmpfs', '/dev/shm');
  const { made, parents } = systemFiles(a, ETC);
  const binds = (paths: string[] | undefined, flag: string) => {
    for (const p of new Set((paths ?? []).map((x) => resolve(x)))) {
      if (!existsSync(p) || p.startsWith('/usr/')) continue;
      parents(p);
      a.push(flag, p, p);
      made.add(p);
    }
  };
  binds(spec.readOnly, '--ro-bind');
  binds(spec.writable, '--bind');
  for (const [list, flag] of [
    [spec.mapped, '--ro-bind'],
    [spec.mappedWritable, '--bind'],
  ] as const) {
    for (const [src, dest] of list ?? []) {
      if (!existsSync(src)) continue;
      parents(dest);
      a.push(flag, src, dest);
      made.add(dest);
    }
  }
  a.push('--chdir', spec.cwd);
  let tail = asSandboxUser(spec.cmd, spec.args);
  // A namespace of its own may let its unprivileged user bind any port (a container_port of 80,
  // as a Knative image may use); the setting is the namespace's, not the host's.
  if (spec.privateNetwork) tail = ['/bin/sh', '-c', 'echo 0 > /proc/sys/net/ipv4/ip_unprivileged_port_start 2>/dev/null; exec "$@"', 'sh', ...tail];
  return { cmd: bwrapPath() ?? 'bwrap', args: [...a, '--', ...tail] };
}

let netProbe: Promise<string | undefined> | undefined;

/**
 * Whether a sandbox can have its own network namespace here: undefined when it can, else why not
 * (found once per daemon by running an empty sandbox with --unshare-net).
 */
export function privateNetworkUnavailable(): Promise<string | undefined> {
  netProbe ??= new Promise((resolvePromise) => {
    const { cmd, args } = sandboxCommand({ cmd: '/usr/bin/true', args: [], cwd: '/', privateNetwork: true });
    execFile(cmd, args, { timeout: 10_000 }, (err, _out, stderr) => {
      resolvePromise(err ? `bubblewrap cannot create a network namespace here (${(stderr || err.message).trim().split('\n').pop()})` : undefined);
    });
  });
  return netProbe;
}

/**
 * The file system every bubblewrap sandbox starts from, pushed onto `a`: /usr and the top-level
 * system directories read-only, and the given files of /etc. `parents` makes the parent
 * directories of a further path 0755 (bwrap makes missing ones 0700 when it runs as root).
 */
export function systemFiles(a: string[], etc: readonly string[], madeAlready: readonly string[] = []): { made: Set<string>; parents: (p: string) => void } {
  a.push('--ro-bind', '/usr', '/usr');
  for (const top of ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32']) {
    try {
      const st = lstatSync(top);
      if (st.isSymbolicLink()) a.push('--symlink', readlinkSync(top), top);
      else if (st.isDirectory()) a.push('--ro-bind', top, top);
    } catch {
      // not on this machine
    }
  }
  const made = new Set(['/', '/tmp', '/usr', '/proc', '/dev', ...madeAlready]);
  const parents = (p: string) => {
    const chain: string[] = [];
    for (let d = dirname(p); !made.has(d) && d !== '/'; d = dirname(d)) chain.unshift(d);
    for (const d of chain) {
      a.push('--perms', '0755', '--dir', d);
      made.add(d);
    }
  };
  for (const f of etc) {
    if (!existsSync(f)) continue;
    parents(f);
    a.push('--ro-bind', f, f);
  }
  return { made, parents };
}

/** The command as it runs inside: a root daemon's drops to nobody with no capabilities through setpriv. */
export function asSandboxUser(cmd: string, args: string[]): string[] {
  return runsAsRoot()
    ? ['/usr/bin/setpriv', `--reuid=${SANDBOX_UID}`, `--regid=${SANDBOX_UID}`, '--clear-groups', '--inh-caps=-all', '--bounding-set=-all', '--no-new-privs', '--', cmd, ...args]
    : [cmd, ...args];
}

/**
 * The prefix of a Python interpreter outside /usr (pyenv's under ~/.pyenv/versions/X): bound
 * read-only so the interpreter works, and nothing else of that home.
 */
export function interpreterRoots(python: string | undefined): string[] {
  if (!python || !python.startsWith('/')) return [];
  const roots = new Set<string>();
  try {
    const real = realpathSync(python);
    // bin/python3 -> the prefix; a venv's bin/python links to its base interpreter's.
    roots.add(dirname(dirname(real)));
    roots.add(dirname(dirname(python)));
  } catch {
    return [];
  }
  return [...roots].filter((r) => r !== '/' && !r.startsWith('/usr'));
}

/**
 * A runtime's installation outside /usr (node from nvm, go in /opt/go): its prefix, bound
 * read-only, and its bin directory for PATH. Nothing for a runtime /usr already holds.
 */
export function toolRoot(bin: string): { root: string; bin: string } | undefined {
  const found = onPath(bin);
  if (!found) return undefined;
  try {
    const real = realpathSync(found);
    if (real.startsWith('/usr/')) return undefined;
    return { root: dirname(dirname(real)), bin: dirname(real) };
  } catch {
    return undefined;
  }
}

/** A PATH that exists inside the sandbox: the interpreter's bin first, then /usr. */
export function sandboxPath(firstDirs: string[]): string {
  return [...firstDirs, '/usr/local/bin', '/usr/bin', '/bin'].join(':');
}

/**
 * The machine's pip configuration for a sandboxed pip install: the system files, the daemon
 * user's own pip.conf (mapped to the sandbox's HOME, and nothing else of that home), and the
 * local directories they and the PIP_ variables name (wheel folders, file:// indexes,
 * constraints). The operator's offline set-up then works the same inside.
 */
export function pipSettings(sandboxHome: string): { readOnly: string[]; mapped: Array<[string, string]> } {
  const system = ['/etc/pip.conf', '/etc/xdg/pip'];
  const user: Array<[string, string]> = [
    [join(homedir(), '.config', 'pip', 'pip.conf'), join(sandboxHome, '.config', 'pip', 'pip.conf')],
    [join(homedir(), '.pip', 'pip.conf'), join(sandboxHome, '.pip', 'pip.conf')],
  ];
  const texts: string[] = Object.entries(process.env).filter(([k]) => k.startsWith('PIP_')).map(([, v]) => v ?? '');
  const files = [...system.flatMap((p) => (p.endsWith('pip') ? [join(p, 'pip.conf')] : [p])), ...user.map(([src]) => src), process.env.PIP_CONFIG_FILE ?? ''];
  for (const f of files) {
    try {
      texts.push(readFileSync(f, 'utf8'));
    } catch {
      // absent
    }
  }
  const paths = new Set<string>();
  for (const token of texts.join('\n').split(/[\s=]+/)) {
    const p = token.startsWith('file://') ? decodeURIComponent(token.slice('file://'.length)) : token;
    if (p.startsWith('/') && existsSync(p) && !p.startsWith(homedir())) paths.add(p);
  }
  const readOnly = [...system, ...paths, ...(process.env.PIP_CONFIG_FILE ? [process.env.PIP_CONFIG_FILE] : [])];
  return { readOnly: readOnly.filter((p) => existsSync(p)), mapped: user };
}
