import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { AreaContext, BackupFile } from '../../area.js';
import type { GaugeSample } from '../../metrics/gauges.js';
import { instancePaths } from './redis-conf.js';
import { authedCommand } from './resp.js';
import type { CacheService } from './service.js';
import { parseInfo } from './stats.js';
import type { InstanceRow } from './store.js';

/** A scrape waits at most this long for one server's INFO. */
const INFO_TIMEOUT_MS = 1_000;
/** A backup waits at most this long for one server's snapshot. */
const SNAPSHOT_TIMEOUT_MS = 120_000;
/** Redis 7 loads an AOF directory whose only file is an RDB base: what a restore starts from. */
const AOF_DIR = 'appendonlydir';
const AOF_BASE = 'appendonly.aof.1.base.rdb';
const AOF_MANIFEST = 'appendonly.aof.manifest';

/** Instances whose server should be running, with their passwords opened (a sealed store skips them). */
function liveInstances(svc: CacheService): InstanceRow[] {
  const out: InstanceRow[] = [];
  for (const stored of svc.store.all()) {
    if (stored.state === 'deleting' || !stored.ever_ready) continue;
    try {
      out.push(svc.store.opened(stored));
    } catch {
      // the password cannot be opened (sealed store): nothing can be asked of that server
    }
  }
  return out;
}

const info = async (row: InstanceRow, section: string, timeoutMs: number) => {
  const text = await authedCommand(row.port, row.password, ['INFO', section], timeoutMs);
  if (typeof text !== 'string') throw new Error('INFO returned no text');
  return parseInfo(text).get(section) ?? new Map<string, string>();
};

/** Memory used and capped per instance, read with INFO at scrape time; a silent server is left out. */
export function cacheMetricsReader(ctx: AreaContext, svc: CacheService) {
  return {
    area: 'cache',
    async read(): Promise<GaugeSample[]> {
      const shorts = new Map((ctx.db.prepare('SELECT id, short FROM acct_projects').all() as Array<{ id: string; short: string }>).map((p) => [p.id, p.short]));
      const per = await Promise.all(
        liveInstances(svc).map(async (row): Promise<GaugeSample[]> => {
          try {
            const m = await info(row, 'memory', INFO_TIMEOUT_MS);
            const labels = { project: shorts.get(row.project_id) ?? '', cache: row.name };
            const samples: GaugeSample[] = [];
            if (m.has('used_memory')) samples.push({ name: 'platform_cache_memory_bytes', labels, value: Number(m.get('used_memory')) });
            if (m.has('maxmemory')) samples.push({ name: 'platform_cache_maxmemory_bytes', labels, value: Number(m.get('maxmemory')) });
            return samples;
          } catch {
            return [];
          }
        }),
      );
      return per.flat();
    },
  };
}

/**
 * The data of every persistent instance for a backup, as an AOF directory whose base is a fresh
 * RDB snapshot (BGSAVE: a fork's point-in-time copy, taken when the backup begins). A server that
 * does not answer is down, so its AOF files on disk are still: they are taken as they are.
 */
export function cacheBackupPart(ctx: AreaContext, svc: CacheService) {
  return {
    area: 'cache',
    async files(): Promise<BackupFile[]> {
      const persistent = liveInstances(svc).filter((row) => row.persistence_enabled === 1);
      const per = await Promise.all(persistent.map((row) => instanceFiles(ctx, row)));
      return per.flat();
    },
  };
}

async function instanceFiles(ctx: AreaContext, row: InstanceRow): Promise<BackupFile[]> {
  const paths = instancePaths(ctx.config.home, row.id);
  const rel = (...p: string[]) => join('cache', row.id, 'data', AOF_DIR, ...p);
  try {
    await snapshot(row);
    return [
      { path: rel(AOF_BASE), from: join(paths.data, 'dump.rdb') },
      { path: rel(AOF_MANIFEST), data: `file ${AOF_BASE} seq 1 type b\n` },
    ];
  } catch (e) {
    const dir = join(paths.data, AOF_DIR);
    ctx.log.warn('cache backup: the server did not snapshot; its AOF files are taken as they are', { cache: row.name, error: (e as Error).message });
    if (!existsSync(dir)) return [];
    return readdirSync(dir).map((f) => ({ path: rel(f), from: join(dir, f) }));
  }
}

/** BGSAVE and wait until a save that began after the request has finished well. */
async function snapshot(row: InstanceRow): Promise<void> {
  const deadline = Date.now() + SNAPSHOT_TIMEOUT_MS;
  const saves = async () => {
    const p = await info(row, 'persistence', 2_000);
    return { saves: Number(p.get('rdb_saves') ?? NaN), running: p.get('rdb_bgsave_in_progress') === '1', ok: p.get('rdb_last_bgsave_status') === 'ok' };
  };
  const wait = async (done: (s: Awaited<ReturnType<typeof saves>>) => boolean) => {
    for (let pause = 20; Date.now() < deadline; pause = Math.min(pause * 2, 250)) {
      const now = await saves();
      if (done(now)) return now;
      await new Promise((r) => setTimeout(r, pause));
    }
    throw new Error(`no snapshot within ${SNAPSHOT_TIMEOUT_MS / 1000} s`);
  };
  // A save already running may have forked before the backup began: wait for it, then ask for ours.
  const before = await wait((s) => !s.running);
  if (Number.isNaN(before.saves)) throw new Error('the server does not report rdb_saves (Redis 7 or later is needed)');
  // SCHEDULE: an AOF rewrite in progress delays the save instead of refusing it.
  await authedCommand(row.port, row.password, ['BGSAVE', 'SCHEDULE'], 2_000);
  const after = await wait((s) => s.saves > before.saves && !s.running);
  if (!after.ok) throw new Error('the snapshot failed (rdb_last_bgsave_status is not ok)');
}
