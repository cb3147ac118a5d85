import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { writePrivate } from '../../bootstrap.js';
import type { MaxmemoryPolicy } from '../../../api/cache.js';

/** Where one instance keeps its files: $PLATFORM_HOME/cache/<id>/. */
export interface InstancePaths {
  dir: string;
  conf: string;
  data: string;
  log: string;
  stderr: string;
  pid: string;
  tlsDir: string;
}

export function instancePaths(home: string, id: string): InstancePaths {
  const dir = join(home, 'cache', id);
  return {
    dir,
    conf: join(dir, 'redis.conf'),
    data: join(dir, 'data'),
    log: join(dir, 'redis.log'),
    stderr: join(dir, 'redis.stderr'),
    pid: join(dir, 'redis.pid'),
    tlsDir: join(dir, 'tls'),
  };
}

export interface ServerSettings {
  port: number;
  password: string;
  /** A redis-server memory value: bytes, or with a unit such as 4mb. */
  maxmemory: string | number;
  policy: MaxmemoryPolicy;
  persistence: boolean;
  tls?: { port: number; cert: string; key: string; ca: string };
}

/**
 * Renders redis.conf. The password is not written at all: the default user accepts the SHA-256 of
 * it (an ACL `#` rule), so neither this file nor a command line holds it, and the database keeps
 * it sealed (issue 17). The password is 192 random bits, so an unsalted hash gives nothing to
 * guess against. CONFIG is disabled as managed Redis services do: a client could otherwise
 * change requirepass under the supervisor or make CONFIG REWRITE edit this file.
 */
export function renderRedisConf(paths: InstancePaths, s: ServerSettings): string {
  // redis.conf splits on spaces; quote paths so a state directory with spaces still works.
  const q = (p: string) => JSON.stringify(p);
  const lines = [
    '# Written by the platform daemon; edits are overwritten on the next restart.',
    'bind 127.0.0.1',
    'protected-mode yes',
    `port ${s.port}`,
    'daemonize no',
    'supervised no',
    `logfile ${q(paths.log)}`,
    `dir ${q(paths.data)}`,
    `user default on resetpass #${createHash('sha256').update(s.password).digest('hex')} ~* &* +@all`,
    `maxmemory ${s.maxmemory}`,
    `maxmemory-policy ${s.policy}`,
    // Persistence is append-only when enabled; RDB snapshots are off either way.
    'save ""',
    `appendonly ${s.persistence ? 'yes' : 'no'}`,
    'appendfsync everysec',
    'rename-command CONFIG ""',
  ];
  if (s.tls) {
    lines.push(
      `tls-port ${s.tls.port}`,
      `tls-cert-file ${q(s.tls.cert)}`,
      `tls-key-file ${q(s.tls.key)}`,
      `tls-ca-cert-file ${q(s.tls.ca)}`,
      // The password is the only boundary (spec 3 §4.2): no client certificates.
      'tls-auth-clients no',
    );
  }
  return lines.join('\n') + '\n';
}

/** Creates the instance directories and writes the config file readable only by the daemon's user. */
export function writeRedisConf(paths: InstancePaths, s: ServerSettings): void {
  mkdirSync(paths.data, { recursive: true, mode: 0o700 });
  // Written beside and renamed into place: a server starting during a rotation must never read a
  // truncated file (an empty redis.conf means port 6379 and no password: alive, but not on its port).
  const tmp = `${paths.conf}.${randomBytes(4).toString('hex')}.tmp`;
  writePrivate(tmp, renderRedisConf(paths, s));
  renameSync(tmp, paths.conf);
}
