import { BaseCommand } from '../../cli/base-command.js';
import { stopDaemon } from '../../client/local-daemon.js';

export default class DaemonStop extends BaseCommand {
  static override summary = 'Stop the local daemon';
  static override examples = ['<%= config.bin %> daemon stop'];

  async run() {
    const info = await stopDaemon();
    this.print(info ? `daemon stopped (pid ${info.pid})` : 'daemon is not running');
    return { stopped: Boolean(info), pid: info?.pid };
  }
}
