import chalk from 'chalk';
import { render } from 'ink-testing-library';
import { afterEach, describe, expect, it } from 'vitest';
import { Dashboard } from '../../src/tui/status/Dashboard.js';
import type { StatusBackend } from '../../src/tui/status/backend.js';
import type { StatusAction } from '../../src/tui/status/actions.js';
import type { LogSource } from '../../src/tui/logs/LogsView.js';
import { PANE_TITLES, type Pane, type PaneId, type Snapshot, type StatusRow } from '../../src/tui/status/model.js';

/** Component tests of the dashboard, fed by a fake backend (the real one is tested under tmux in test/e2e). */

const row = (name: string, state = 'ready', extra: Partial<StatusRow> = {}): StatusRow => ({ name, state, health: state === 'ready' ? 'ok' : 'bad', summary: `summary of ${name}`, ...extra });

function snapshot(over: Partial<Record<PaneId, Partial<Pane>>> = {}): Snapshot {
  const rows: Partial<Record<PaneId, StatusRow[]>> = {
    workloads: [
      row('hello', 'ready', { summary: 'function hello-00001 http://hello-abc123.apps.localhost:7070', ref: { kind: 'function' } }),
      row('broken', 'failed', { summary: 'agent broken-00002 failed', error: 'framework adk needs "google-adk"', ref: { kind: 'agent' } }),
      row('batch-worker', 'ready', { ref: { kind: 'function' } }),
    ],
    services: [row('api')],
    messaging: [row('orders', 'ready', { ref: { type: 'topic', topic: 'orders' } }), row('orders/workers', 'ready', { summary: 'backlog 3', ref: { type: 'subscription', topic: 'orders', sub: 'workers' } })],
    daemon: [row('address', 'up', { summary: 'http://127.0.0.1:7070' })],
  };
  const ids: PaneId[] = ['workloads', 'services', 'mcp', 'triggers', 'gateway', 'messaging', 'indexes', 'caches', 'daemon'];
  return {
    project: 'default',
    updated_at: '2026-11-27T10:11:12.000Z',
    daemon: { url: 'http://127.0.0.1:7070', uptime_seconds: 125, isolation: 'bubblewrap: each workload sees only its revision' },
    panes: ids.map((id) => ({ id, title: PANE_TITLES[id], rows: rows[id] ?? [], ...over[id] })),
  };
}

function fakeBackend(opts: { snap?: Snapshot; logLines?: string[] } = {}) {
  const calls = { loads: 0, details: [] as string[], runs: [] as string[] };
  const backend: StatusBackend = {
    load: async () => {
      calls.loads++;
      return opts.snap ?? snapshot();
    },
    details: async (pane, r) => {
      calls.details.push(`${pane}/${r.name}`);
      return [`details of ${r.name}`, 'revisions (newest first):', `  ${r.name}-00002  failed`, `  ${r.name}-00001  ready`, 'build log tail: ModuleNotFoundError: google'];
    },
    actions: (pane, r): StatusAction[] =>
      pane === 'workloads'
        ? [
            {
              key: 'r',
              label: 'redeploy',
              prompt: `redeploy ${r.name} from its stored source`,
              run: async () => {
                calls.runs.push(`redeploy ${r.name}`);
                return `${r.name}: redeploy started`;
              },
            },
          ]
        : [],
    logs: (pane, r) => {
      if (pane !== 'workloads') return undefined;
      const source: LogSource = {
        subscribe(onLine) {
          for (const message of opts.logLines ?? []) onLine({ ts: '2026-11-27T10:00:00Z', revision: `${r.name}-00001`, instance: `${r.name}-00001-a`, stream: 'stdout', message });
          return () => undefined;
        },
      };
      return { title: `function ${r.name}`, source };
    },
  };
  return { backend, calls };
}

let cleanup: (() => void) | undefined;
const CHALK_LEVEL = chalk.level;
afterEach(() => {
  cleanup?.();
  chalk.level = CHALK_LEVEL;
});

async function mount(props: { backend: StatusBackend; columns?: number; rows?: number; color?: boolean; intervalMs?: number }) {
  const app = render(<Dashboard backend={props.backend} intervalMs={props.intervalMs ?? 60_000} color={props.color ?? false} columns={props.columns ?? 100} rows={props.rows ?? 24} />);
  cleanup = () => app.unmount();
  await until(() => app.lastFrame()!.includes('platform status ·') && app.lastFrame()!.includes('hello'), app);
  return app;
}

type App = ReturnType<typeof render>;

/** Waits for the frame to satisfy `ok` (ink renders asynchronously); fails with the last frame. */
async function until(ok: () => boolean, app: App, what = 'the expected frame'): Promise<string> {
  const end = Date.now() + 3000;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}; last frame:\n${app.lastFrame()}`);
    await new Promise((r) => setTimeout(r, 5));
  }
  // ink re-attaches its input listener in an effect after each frame: let it run before the next key.
  await new Promise((r) => setTimeout(r, 10));
  return app.lastFrame()!;
}

async function press(app: App, key: string, expect: (frame: string) => boolean, what?: string): Promise<string> {
  app.stdin.write(key);
  return until(() => expect(app.lastFrame()!), app, what ?? `the frame after ${JSON.stringify(key)}`);
}

const selectedLine = (frame: string) => frame.split('\n').find((l) => /^\s*(\S.*\s)?> \S/.test(l) && !/^>\d/.test(l.trim())) ?? '';

describe('status dashboard', () => {
  it('shows the header, every pane with its count, and a failed row with its real error', async () => {
    const app = await mount({ backend: fakeBackend().backend });
    const frame = app.lastFrame()!;
    expect(frame.split('\n')[0]).toMatch(/^platform status · project default · http:\/\/127\.0\.0\.1:7070 · up 2m · isolation bubblewrap/);
    for (const title of ['agents/functions', 'services', 'MCP servers', 'triggers', 'gateway', 'topics/subs', 'indexes', 'caches', 'daemon/sandbox']) expect(frame).toContain(title);
    expect(frame).toMatch(/>1 agents\/functions +3 !1/);
    expect(frame).toMatch(/hello +ready +function hello-00001 http:\/\/hello-abc123/);
    // The failed row says failed and why, not an address or a revision that does not serve.
    expect(frame).toMatch(/broken +failed +framework adk needs "google-adk"/);
  });

  it('moves with j/k and arrows, between panes with tab, shift-tab and digits', async () => {
    const app = await mount({ backend: fakeBackend().backend });
    expect(selectedLine(app.lastFrame()!)).toContain('hello');
    expect(selectedLine(await press(app, 'j', (f) => selectedLine(f).includes('broken')))).toContain('broken');
    await press(app, '\x1b[B', (f) => selectedLine(f).includes('batch-worker'));
    await press(app, 'j', (f) => selectedLine(f).includes('batch-worker'));
    await press(app, 'k', (f) => selectedLine(f).includes('broken'));
    await press(app, '\x1b[A', (f) => selectedLine(f).includes('hello'));
    let frame = await press(app, '\t', (f) => f.includes('services (1)'));
    expect(frame).toMatch(/>2 services/);
    // Keys faster than a frame arrive as one chunk: each still counts.
    frame = await press(app, '\t\t\t\t', (f) => f.includes('topics/subs (2)'));
    frame = await press(app, '1', (f) => f.includes('agents/functions (3)'));
    frame = await press(app, '\x1b[Z', (f) => f.includes('agents/functions (3)'));
    frame = await press(app, '\x1b[Z', (f) => f.includes('daemon/sandbox (1)'), 'shift-tab wraps to the last pane');
    frame = await press(app, '6', (f) => f.includes('topics/subs (2)'));
    expect(frame).toContain('orders/workers');
    // Each pane remembers its selection.
    await press(app, '1', (f) => f.includes('agents/functions (3)'));
    expect(selectedLine(app.lastFrame()!)).toContain('hello');
  });

  it('filters rows by name with /, and esc clears the filter', async () => {
    const app = await mount({ backend: fakeBackend().backend });
    await press(app, '/', (f) => f.includes('(enter keeps, esc clears)'));
    let frame = await press(app, 'b', (f) => f.includes('matching "b"'));
    frame = await press(app, 'r', (f) => f.includes('1 of 3 matching "br"'));
    expect(frame).toContain('broken');
    expect(frame).not.toMatch(/hello +ready/);
    expect(frame).not.toContain('batch-worker');
    frame = await press(app, '\r', (f) => !f.includes('(enter keeps'));
    expect(frame).toContain('1 of 3 matching "br"');
    frame = await press(app, '\x1b', (f) => f.includes('agents/functions (3)'));
    expect(frame).toContain('batch-worker');
  });

  it('opens details with enter and goes back with esc', async () => {
    const { backend, calls } = fakeBackend();
    const app = await mount({ backend });
    await press(app, 'j', (f) => selectedLine(f).includes('broken'));
    const frame = await press(app, '\r', (f) => f.includes('details of broken'));
    expect(calls.details).toEqual(['workloads/broken']);
    expect(frame).toContain('details: agents/functions broken');
    expect(frame).toContain('broken-00002  failed');
    expect(frame).toContain('build log tail: ModuleNotFoundError: google');
    await press(app, '\x1b', (f) => f.includes('agents/functions (3)'));
  });

  it('shows the key list with ? and closes it', async () => {
    const app = await mount({ backend: fakeBackend().backend });
    const frame = await press(app, '?', (f) => f.includes('move between rows'));
    for (const k of ['move between rows', 'next / previous pane', 'details', 'filter rows by name', 'redeploy', 'roll back', 'scale to zero', 'purge', 'quit']) expect(frame).toContain(k);
    await press(app, '?', (f) => f.includes('agents/functions (3)'));
  });

  it('asks y/N before an action: anything but y cancels, y runs it and reports', async () => {
    const { backend, calls } = fakeBackend();
    const app = await mount({ backend });
    let frame = await press(app, 'r', (f) => f.includes('[y/N]'));
    expect(frame).toContain('redeploy hello from its stored source? [y/N]');
    frame = await press(app, 'n', (f) => f.includes('redeploy: cancelled'));
    expect(calls.runs).toEqual([]);
    await press(app, 'r', (f) => f.includes('[y/N]'));
    frame = await press(app, 'y', (f) => f.includes('hello: redeploy started'));
    expect(calls.runs).toEqual(['redeploy hello']);
    // A row without actions ignores the key.
    await press(app, '2', (f) => f.includes('services (1)'));
    app.stdin.write('r');
    await new Promise((r) => setTimeout(r, 50));
    expect(app.lastFrame()).not.toContain('[y/N]');
  });

  it('opens the logs view with l and comes back with q', async () => {
    const app = await mount({ backend: fakeBackend({ logLines: ['greeting world', 'listening on 8080'] }).backend });
    const frame = await press(app, 'l', (f) => f.includes('logs: function hello') && f.includes('listening on 8080'));
    expect(frame).toContain('greeting world');
    expect(frame).toContain('listening on 8080');
    await press(app, 'q', (f) => f.includes('agents/functions (3)'), 'q leaves the logs, not the dashboard');
    // A pane without logs says so instead of opening an empty screen.
    await press(app, '6', (f) => f.includes('topics/subs (2)'));
    await press(app, 'l', (f) => f.includes('have no logs here'));
  });

  it('keeps every line inside a narrow terminal: truncated, never wrapped', async () => {
    const long = row('a-very-long-function-name-that-goes-on', 'failed', { error: `${'x'.repeat(200)} end of a long error` });
    const snap = snapshot({ workloads: { rows: [long, row('hello')] } });
    for (const [columns, rows] of [[80, 24], [40, 12]] as const) {
      const app = render(<Dashboard backend={fakeBackend({ snap }).backend} intervalMs={60_000} color={false} columns={columns} rows={rows} />);
      const frame = await until(() => app.lastFrame()!.includes('hello'), app);
      const lines = frame.split('\n');
      for (const l of lines) expect(l.length, `line ${JSON.stringify(l)} at ${columns} columns`).toBeLessThanOrEqual(columns);
      expect(lines.length).toBeLessThan(rows);
      expect(frame).not.toContain('end of a long error');
      expect(frame).toContain('…');
      // Without room for the pane list, the title says where the pane is.
      if (columns < 70) expect(frame).toContain('1/9 agents/functions (2)');
      app.unmount();
    }
  });

  it('draws no escape codes without colour, and colours with it', async () => {
    // As on a colour terminal: without this, chalk sees no TTY here and would hide a colour leak.
    chalk.level = 1;
    const plain = await mount({ backend: fakeBackend().backend, color: false });
    await press(plain, 'r', (f) => f.includes('[y/N]'));
    expect(plain.frames.join('')).not.toMatch(/\x1b\[/);
    plain.unmount();
    const coloured = render(<Dashboard backend={fakeBackend().backend} intervalMs={60_000} color columns={100} rows={24} />);
    expect(await until(() => /\x1b\[/.test(coloured.lastFrame()!), coloured, 'a coloured frame')).toMatch(/\x1b\[3[12]m/);
    coloured.unmount();
  });

  it('a pane that fails shows its error and the others still show', async () => {
    const snap = snapshot({ caches: { error: '503 cache store unavailable' } });
    const app = await mount({ backend: fakeBackend({ snap }).backend });
    expect(app.lastFrame()).toMatch(/8 caches +0 err/);
    const frame = await press(app, '8', (f) => f.includes('caches (0)'));
    expect(frame).toContain('cannot read caches: 503 cache store unavailable');
  });

  it('polls while mounted and stops when unmounted', async () => {
    const { backend, calls } = fakeBackend();
    const app = await mount({ backend, intervalMs: 10 });
    await until(() => calls.loads >= 3, app, 'three loads');
    app.unmount();
    const after = calls.loads;
    await new Promise((r) => setTimeout(r, 60));
    expect(calls.loads).toBe(after);
  });
});
