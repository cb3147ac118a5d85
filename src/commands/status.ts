import { Flags } from '@oclif/core';
import { canDrawUi } from '../cli/terminal.js';
import { BaseCommand } from '../cli/base-command.js';
import { projectFlag } from '../cli/flags.js';
import { getContext } from '../client/contexts.js';
import { findDaemon } from '../client/local-daemon.js';
import { loadSnapshot, type StatusTarget } from '../tui/status/loaders.js';
import type { Snapshot } from '../tui/status/model.js';
import { plainTable } from '../tui/status/plain-table.js';

// The terminal's alternate screen: the dashboard draws there and the shell's scrollback is back on quit.
const ENTER_ALT_SCREEN = '\x1b[?1049h';
const LEAVE_ALT_SCREEN = '\x1b[?1049l';
const SHOW_CURSOR = '\x1b[?25h';


/** ink and React are loaded only for the dashboard, so `status --json` and the plain table stay light. */
const loadUi = () => Promise.all([import('ink'), import('react'), import('../tui/status/Dashboard.js'), import('../tui/status/backend.js')]);

export default class Status extends BaseCommand {
  static override summary = 'Live dashboard of the whole project: workloads, services, messaging, indexes, caches and the daemon';
  static override description =
    'On a terminal: a live, keyboard-driven dashboard (press ? for the keys). Without a terminal (a pipe, or CI set) or with --once: one plain table of everything, exit 0. --json: the whole snapshot.';
  static override examples = [
    '<%= config.bin %> status',
    '<%= config.bin %> status -p staging',
    '<%= config.bin %> status --once',
    '<%= config.bin %> status --json',
    'NO_COLOR=1 <%= config.bin %> status',
  ];
  static override flags = {
    project: projectFlag,
    once: Flags.boolean({ description: 'print one plain table and exit (the default when stdout is not a terminal)' }),
    interval: Flags.integer({ description: 'refresh interval in seconds', default: 2, min: 1 }),
    'no-color': Flags.boolean({ description: 'no colours (also when NO_COLOR is set)' }),
  };

  async run() {
    const { flags } = await this.parse(Status);
    const interactive = !this.jsonEnabled() && !flags.once && canDrawUi();
    // The heaviest part of the first paint: loaded while the CLI connects, and never for --json or a pipe.
    const ui = interactive ? loadUi() : undefined;
    ui?.catch(() => undefined);
    const project = this.projectRef(flags.project, flags.context);
    const client = await this.client();
    const local = getContext(flags.context).kind === 'local' ? await findDaemon() : undefined;
    const target: StatusTarget = { client, project, local };
    if (this.jsonEnabled()) return loadSnapshot(target);
    if (!ui) {
      this.log(plainTable(await loadSnapshot(target)));
      return undefined;
    }
    await this.dashboard(ui, target, { intervalMs: flags.interval * 1000, color: !flags['no-color'] && !process.env.NO_COLOR });
    return undefined;
  }

  private async dashboard(ui: ReturnType<typeof loadUi>, target: StatusTarget, opts: { intervalMs: number; color: boolean }): Promise<void> {
    // The first snapshot is read while ink loads; the dashboard's first refresh takes it.
    let first: Promise<Snapshot> | undefined = loadSnapshot(target);
    first.catch(() => undefined);
    // react is CommonJS: its dynamic import is the module as `default` (bundled or not).
    const [{ render }, { default: React }, { Dashboard }, { apiBackend }] = await ui;
    const backend = apiBackend(target);
    const load = backend.load;
    backend.load = () => {
      const p = first ?? load();
      first = undefined;
      return p;
    };
    const restore = () => process.stdout.write(LEAVE_ALT_SCREEN + SHOW_CURSOR);
    process.stdout.write(ENTER_ALT_SCREEN);
    // A crash or a signal still gives the shell its screen and cursor back.
    process.once('exit', restore);
    try {
      const app = render(React.createElement(Dashboard, { backend, ...opts }), { patchConsole: false });
      await app.waitUntilExit();
    } finally {
      process.off('exit', restore);
      restore();
    }
  }
}
