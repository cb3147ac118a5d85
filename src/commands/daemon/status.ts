import { BaseCommand } from '../../cli/base-command.js';
import { probeDaemon, silentDaemon } from '../../client/local-daemon.js';
import { nodeFetch } from '../../client/node-fetch.js';
import { platformHome } from '../../client/contexts.js';
import type { Reconciliation } from '../../api/health.js';

/** The daemon's start after listening, as /healthz reports it (absent from daemons before it). */
async function reconciliationOf(url: string): Promise<Reconciliation | undefined> {
  try {
    const res = await nodeFetch(new URL('/healthz', url), { signal: AbortSignal.timeout(1000) });
    return ((await res.json()) as { reconciliation?: Reconciliation }).reconciliation;
  } catch {
    return undefined;
  }
}

/** "reconciling: areas 12/15, caches 7/20" while workloads come back, "all back" once they are. */
function describeReconciliation(r: Reconciliation): string {
  const counts = [`areas ${r.areas.started}/${r.areas.total}`, ...Object.entries(r.workloads).filter(([, c]) => c.total > 0).map(([what, c]) => `${what} ${c.done}/${c.total}`)];
  if (r.state === 'done') return `all back (${counts.join(', ')})`;
  if (r.state === 'failed') return `start failed: ${Object.entries(r.errors ?? {}).map(([area, e]) => `${area}: ${e}`).join('; ')}`;
  return `reconciling: ${counts.join(', ')}`;
}

export default class DaemonStatus extends BaseCommand {
  static override summary = 'Show whether the local daemon is running';
  static override description = 'Exits 0 when the daemon is running and healthy, 1 otherwise.';
  static override examples = ['<%= config.bin %> daemon status', '<%= config.bin %> daemon status --json'];

  async run() {
    const probe = await probeDaemon();
    if (probe.state === 'silent') throw silentDaemon(probe.info);
    const info = probe.state === 'running' ? probe.info : undefined;
    const isolation = info?.isolation ? { state: info.isolation, detail: info.isolation_detail ?? '' } : undefined;
    const reconciliation = info ? await reconciliationOf(info.url) : undefined;
    const result = { running: Boolean(info), url: info?.url, internal_url: info?.internal_url, sandbox_url: info?.sandbox_url, pid: info?.pid, version: info?.version, home: platformHome(), isolation, ...(reconciliation ? { reconciliation } : {}) };
    if (info) this.fields({ state: 'running', url: info.url, ...(info.internal_url ? { internal_url: info.internal_url } : {}), ...(info.sandbox_url ? { sandbox_url: info.sandbox_url } : {}), pid: info.pid, version: info.version, home: result.home, isolation: isolation ? `${isolation.state}: ${isolation.detail}` : 'unknown', ...(reconciliation ? { workloads: describeReconciliation(reconciliation) } : {}) });
    if (isolation?.state === 'unavailable' || isolation?.state === 'none') process.stderr.write(`warning: workload isolation ${isolation.state}: ${isolation.detail}\n`);
    else this.print(`daemon is not running (state directory ${result.home}); start it with \`platform daemon start\``);
    if (!info) process.exitCode = 1;
    return result;
  }
}
