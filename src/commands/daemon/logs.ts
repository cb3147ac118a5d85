import { Flags } from '@oclif/core';
import { createReadStream, existsSync, readFileSync, statSync, watch } from 'node:fs';
import { BaseCommand } from '../../cli/base-command.js';
import { daemonLogFile } from '../../client/local-daemon.js';
import { AbortError } from '../../client/errors.js';

export default class DaemonLogs extends BaseCommand {
  static override summary = "Print the local daemon's log";
  static override examples = ['<%= config.bin %> daemon logs', '<%= config.bin %> daemon logs --lines 200', '<%= config.bin %> daemon logs --follow'];
  static override flags = {
    lines: Flags.integer({ char: 'n', description: 'number of lines from the end', default: 50, min: 1 }),
    follow: Flags.boolean({ char: 'f', description: 'keep printing new lines' }),
  };

  async run() {
    const { flags } = await this.parse(DaemonLogs);
    const file = daemonLogFile();
    if (!existsSync(file)) throw new AbortError('the daemon has no log yet', 'start it with `platform daemon start`');
    const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean).slice(-flags.lines);
    if (this.jsonEnabled()) return { file, lines };
    for (const l of lines) this.log(l);
    if (!flags.follow) return { file, lines };
    let pos = statSync(file).size;
    await new Promise<void>((resolve) => {
      const w = watch(file, () => {
        const size = statSync(file).size;
        if (size <= pos) return;
        createReadStream(file, { start: pos, end: size - 1 }).pipe(process.stdout, { end: false });
        pos = size;
      });
      process.once('SIGINT', () => (w.close(), resolve()));
    });
    return { file, lines };
  }
}
