import { z } from 'zod';
import { route } from './contract.js';
import { lazySchema } from './lazy.js';

/** The archive `platform server backup` writes and `platform server restore` reads (docs/decisions/operations.md). */
export const BACKUP_FORMAT = 1;
export const BACKUP_MANIFEST = 'backup.json';

/** backup.json at the archive's root: what was backed up, from where, and when. */
export const BackupManifest = lazySchema(() => z.object({
  format: z.literal(BACKUP_FORMAT),
  platform_version: z.string(),
  created_at: z.string(),
  /** The state directory it came from: a restore elsewhere rewrites stored paths that name it. */
  home: z.string(),
  parts: z.array(z.string()),
}));
export type BackupManifest = z.infer<typeof BackupManifest>;

export const operationsRoutes = {
  metrics: route({
    id: 'operations.metrics',
    method: 'GET',
    path: '/metrics',
    summary: 'Metrics in the Prometheus text format (platform admins: a session or a personal API key as bearer)',
    auth: 'platform-admin',
    status: 200,
    response: lazySchema(() => z.string()),
  }),
  backup: route({
    id: 'operations.backup',
    method: 'POST',
    path: '/v1/operations/backup',
    summary: 'A consistent archive (tar.gz) of the state directory while the daemon serves: store, keys, vector saves, buckets, cache data',
    auth: 'platform-admin',
    status: 200,
    response: lazySchema(() => z.string()),
  }),
};
