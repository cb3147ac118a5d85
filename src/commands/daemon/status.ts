import { BaseCommand } from '../../cli/base-command.js';
import { probeDaemon, silentDaemon } from '../../client/local-daemon.js';
import { platformHome } from '../../client/contexts.js';

export default class DaemonStatus extends BaseCommand {
  static override summary = 'Show whether the local daemon is running';
  static override description = 'Exits 0 when the daemon is running and healthy, 1 otherwise.';
  static override examples = ['<%= config.bin %> daemon status', '<%= config.bin %> daemon status --json'];

  async run() {
    const probe = await probeDaemon();
    if (probe.state === 'silent') throw silentDaemon(probe.info);
    const info = probe.state === 'running' ? probe.info : undefined;
    const isolation = info?.isolation ? { state: info.isolation, detail: info.isolation_detail ?? '' } : undefined;
    const result = { running: Boolean(info), url: info?.url, internal_url: info?.internal_url, sandbox_url: info?.sandbox_url, pid: info?.pid, version: info?.version, home: platformHome(), isolation };
    if (info) this.fields({ state: 'running', url: info.url, ...(info.internal_url ? { internal_url: info.internal_url } : {}), ...(info.sandbox_url ? { sandbox_url: info.sandbox_url } : {}), pid: info.pid, version: info.version, home: result.home, isolation: isolation ? `${isolation.state}: ${isolation.detail}` : 'unknown' });
    if (isolation?.state === 'unavailable' || isolation?.state === 'none') process.stderr.write(`warning: workload isolation ${isolation.state}: ${isolation.detail}\n`);
    else this.print(`daemon is not running (state directory ${result.home}); start it with \`platform daemon start\``);
    if (!info) process.exitCode = 1;
    return result;
  }
}
