import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { SIZE_CLASSES } from '../../../api/cache.js';
import { instancePaths, writeRedisConf, type ServerSettings } from './redis-conf.js';
import type { InstanceRow } from './store.js';
import { certStillGood, ensureCa, issueServerCert } from './tls-ca.js';
import { externalHostname } from './views.js';
import { tightenTree } from '../../state-permissions.js';

/**
 * Writes everything one instance's server reads: redis.conf from the row and, when exposed, a
 * certificate from the local CA. Called at create, at rotation and at every daemon start, so the
 * files always match the row (a running server reads them only when it next starts).
 */
export function writeInstanceFiles(opts: { home: string; keysDir: string; maxmemoryOverride?: string }, row: InstanceRow, projectShort: string): void {
  const paths = instancePaths(opts.home, row.id);
  let tls: ServerSettings['tls'];
  if (row.external_exposure && row.tls_port) {
    const ca = ensureCa(opts.keysDir);
    const cert = join(paths.tlsDir, 'server.crt');
    if (!certStillGood(ca, cert)) issueServerCert(ca, paths.tlsDir, [externalHostname(row.name, projectShort)]);
    // A copy of the CA beside the certificate keeps every file the server reads inside the
    // instance directory, which is all the docker driver mounts.
    const caCopy = join(paths.tlsDir, 'ca.crt');
    copyFileSync(ca.cert, caCopy);
    tls = { port: row.tls_port, cert, key: join(paths.tlsDir, 'server.key'), ca: caCopy };
  }
  // Files a containerized server wrote with the image's umask (docker driver) become 0600 here.
  tightenTree(paths.dir);
  writeRedisConf(paths, {
    port: row.port,
    password: row.password,
    maxmemory: opts.maxmemoryOverride ?? SIZE_CLASSES[row.size_class].bytes,
    policy: row.maxmemory_policy,
    persistence: Boolean(row.persistence_enabled),
    tls,
  });
}
