import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, chownSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { runsAsRoot, SANDBOX_UID } from '../../../runtime/sandbox.js';
import { doorScript } from '../../../runtimes/index.js';

/** A unix socket path longer than this cannot be bound or connected (sun_path is 108 bytes). */
const SUN_PATH_MAX = 107;

/** One instance's door directory and its two sockets. */
export interface DoorDir {
  dir: string;
  sock: string;
  probe: string;
}

/**
 * The instances' own directories `<home>/serverless/doors/<hash of the instance id>/` (docs/decisions/serverless.md,
 * Isolation): 0700, the sandbox user's when the daemon is root, so only the daemon and the door
 * reach door.sock. The name is a short hash: socket paths must stay under 108 bytes.
 */
export class Doors {
  readonly root: string;

  constructor(home: string) {
    this.root = join(home, 'serverless', 'doors');
  }

  /** Start-up: whatever a previous daemon left is stale. */
  empty(): void {
    rmSync(this.root, { recursive: true, force: true });
    mkdirSync(this.root, { recursive: true, mode: 0o700 });
  }

  /** Why a door cannot live here (the state directory's path is too long for unix sockets), or undefined. */
  unusable(): string | undefined {
    const longest = join(this.root, 'x'.repeat(16), 'probe.sock');
    return Buffer.byteLength(longest) > SUN_PATH_MAX ? `the state directory's path is too long for the door's unix sockets (${Buffer.byteLength(longest)} bytes, at most ${SUN_PATH_MAX})` : undefined;
  }

  make(instanceId: string): DoorDir {
    const dir = join(this.root, createHash('sha256').update(instanceId).digest('hex').slice(0, 16));
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    chmodSync(dir, 0o700);
    if (runsAsRoot()) chownSync(dir, SANDBOX_UID, SANDBOX_UID);
    return { dir, sock: join(dir, 'door.sock'), probe: join(dir, 'probe.sock') };
  }

  remove(d: DoorDir): void {
    rmSync(d.dir, { recursive: true, force: true });
  }
}

export interface HostDoor {
  pid: number;
  exited: Promise<void>;
  stop(): Promise<void>;
}

/** Why the daemon cannot run a door in a container's namespace, or undefined when it can. */
export function hostDoorUnavailable(): string | undefined {
  if (!runsAsRoot()) return "a daemon that does not run as root cannot enter a container's network namespace";
  for (const bin of ['/usr/bin/nsenter', '/usr/bin/setpriv']) if (!existsSync(bin)) return `${bin} is missing (util-linux)`;
  return undefined;
}

/**
 * Runs the door on the host inside a container's network namespace, as the sandbox user with no
 * privileges (docker driver, docs/decisions/serverless.md, Isolation). The user cannot traverse
 * the state directory: the door's directory and the bridge's reach it as descriptors (fd 3 and 4,
 * used as /proc/self/fd/N/...), the program itself on stdin, and fd 5 is its lifeline: when the
 * daemon dies, even killed with -9, the door exits.
 */
export async function startHostDoor(nsPid: number, d: DoorDir, bridgeDir: string, port: number, platformPorts: number[], log: (line: string) => void): Promise<HostDoor> {
  const dirFd = openSync(d.dir, 'r');
  const bridgeFd = openSync(bridgeDir, 'r');
  const args = [
    `--net=/proc/${nsPid}/ns/net`,
    '--',
    '/usr/bin/setpriv',
    `--reuid=${SANDBOX_UID}`,
    `--regid=${SANDBOX_UID}`,
    '--clear-groups',
    '--inh-caps=-all',
    '--bounding-set=-all',
    '--no-new-privs',
    '--',
    process.execPath,
    '--input-type=module',
    '-',
    '--dir',
    '/proc/self/fd/3',
    '--bridge',
    '/proc/self/fd/4/bridge.sock',
    '--port',
    String(port),
    '--platform',
    platformPorts.join(','),
    '--lifeline',
    '5',
    '--no-child',
  ];
  const child = spawn('/usr/bin/nsenter', args, { stdio: ['pipe', 'pipe', 'pipe', dirFd, bridgeFd, 'pipe'], detached: true, env: { PATH: '/usr/bin:/bin' } });
  closeSync(dirFd);
  closeSync(bridgeFd);
  // A container that is already gone makes nsenter exit before it reads the script: the write's
  // EPIPE would otherwise be an uncaught exception in the daemon. The exit is handled below.
  child.stdin!.on('error', (e) => log(`door script not delivered: ${(e as Error).message}\n`));
  child.stdin!.end(readFileSync(doorScript()));
  child.stdout!.on('data', (c: Buffer) => log(c.toString('utf8')));
  child.stderr!.on('data', (c: Buffer) => log(c.toString('utf8')));
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', () => resolve());
  });
  if (child.pid === undefined) {
    await exited;
    throw new Error('the door could not be started (nsenter)');
  }
  const pid = child.pid;
  return {
    pid,
    exited,
    async stop() {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // gone
      }
      await exited;
    },
  };
}
