import chalk from 'chalk';
import { render } from 'ink-testing-library';
import { afterEach, describe, expect, it } from 'vitest';
import { Dashboard } from '../../src/tui/status/Dashboard.js';
import type { StatusBackend } from '../../src/tui/status/backend.js';
import type { StatusAction } from '../../src/tui/status/actions.js';
import type { LogSource } from '../../src/tui/logs/LogsView.js';
import { PANE_TITLES, type Pane, type PaneId, type Snapshot, type StatusRow } from '../../src/tui/status/model.js';
import { detailsFor } from '../../src/tui/status/details.js';
import type { StatusTarget } from '../../src/tui/status/loaders.js';
import type { ApiClient } from '../../src/client/api-client.js';

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

  it('re-reads open details on each refresh, keeps them on a failed re-read, and stops once closed', async () => {
    const { backend } = fakeBackend();
    let reads = 0;
    let failNext = false;
    const details: StatusBackend['details'] = async (_pane, r) => {
      reads++;
      if (failNext) {
        failNext = false;
        throw new Error('the daemon did not answer');
      }
      return [`details of ${r.name}`, `backlog ${10 - reads}`];
    };
    const app = await mount({ backend: { ...backend, details }, intervalMs: 40 });
    await press(app, '\r', (f) => f.includes('details of hello'));
    await until(() => /backlog [0-7]\b/.test(app.lastFrame()!), app, 'a later read of the open details');
    failNext = true;
    const failed = await until(() => app.lastFrame()!.includes('cannot read details: the daemon did not answer'), app, 'the failed re-read');
    expect(failed).toMatch(/details of hello\n.*backlog \d/);
    await until(() => !app.lastFrame()!.includes('cannot read details'), app, 'the next good read clearing the error');
    await press(app, '\x1b', (f) => f.includes('agents/functions (3)'));
    const closedAt = reads;
    await new Promise((r) => setTimeout(r, 200));
    // One read may have been in flight when esc was pressed; none start after it.
    expect(reads).toBeLessThanOrEqual(closedAt + 1);
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

/**
 * The details of every kind, read by the real detailsFor (src/tui/status/details/*.ts) from a fake
 * API client that answers by route id with views shaped as the daemon sends them.
 */
describe('status dashboard: details of every kind', () => {
  const T = '2026-11-27T10:00:00.000Z';
  type Answer = (input: any) => unknown;
  const failing = (message: string): Answer => () => {
    throw new Error(message);
  };
  const views: Record<string, Answer> = {
    'mcpservers.get': () => ({
      mcp_server: {
        name: 'tools', visibility: '', expose: '', state: 'failed', ready: false, url: 'http://127.0.0.1:7071/mcp/abc123/tools', version: 2, image: 'mcp.platform.local/tools:v2',
        tool_names: ['add', 'echo', 'bad'], tool_count: 3, message: 'version 3 failed to build: tools/bad.py, line 1: SyntaxError: invalid syntax; version 2 keeps serving', created_at: T,
      },
    }),
    'mcpservers.versions.list': () => ({
      server: 'tools',
      versions: [
        { version: 3, state: 'failed', credential_keys: [], tool_names: ['add', 'echo', 'bad'], tool_count: 3, current: false, message: 'version 3 failed to build: tools/bad.py, line 1: SyntaxError: invalid syntax', created_at: T },
        { version: 2, state: 'ready', image_digest: 'sha256:2', credential_keys: [], tool_names: ['add', 'echo'], tool_count: 2, current: true, created_at: T },
        { version: 1, state: 'ready', image_digest: 'sha256:1', credential_keys: [], tool_names: ['echo'], tool_count: 1, current: false, created_at: T },
      ],
    }),
    'mcpservers.tools.list': () => ({
      server: 'tools',
      tools: [
        { name: 'add', description: 'Add two numbers.', handler: '', schema: {}, credential_keys: [], credentialKeys: [], updated_at: T },
        { name: 'echo', description: 'Say it back.', handler: '', schema: {}, credential_keys: [], credentialKeys: [], updated_at: T },
        { name: 'bad', description: 'Never built.', handler: '', schema: {}, credential_keys: [], credentialKeys: [], updated_at: T },
      ],
    }),
    'triggers.get': () => ({
      name: 'nightly',
      project: 'projects/abc123/triggers/nightly',
      target: { service: 'report', path: '/', kind: 'function' },
      source: { type: 'schedule', schedule: { cron: '0 3 * * *', time_zone: 'Europe/Paris' } },
      retry: { max_attempts: 3, backoff: { initial_seconds: 1, maximum_seconds: 60, multiplier: 2 } },
      next_fire_time: new Date(Date.now() + 2 * 3600_000).toISOString(),
      created_at: T,
      updated_at: T,
      firings: [
        { id: 'f2', scheduled_time: '2026-11-27T03:00:00.000Z', actual_time: '2026-11-27T03:00:00.100Z', attempts: 3, status: 'failed', http_status: 500, duration_ms: 3012, error: 'HTTP 500: boom' },
        { id: 'f1', scheduled_time: '2026-11-26T03:00:00.000Z', actual_time: '2026-11-26T03:00:00.100Z', attempts: 1, status: 'succeeded', http_status: 200, duration_ms: 12 },
      ],
    }),
    'gateway.endpoints.get': () => ({
      name: 'public-api',
      resource_path: 'projects/abc123/gateway/endpoints/public-api',
      project_id: 'abc123',
      url: 'http://api.example.com:7070/',
      hostname: 'api.example.com',
      domain_kind: 'custom',
      published: true,
      state: 'pending_verification',
      message: 'waiting for the CNAME of api.example.com',
      target: { kind: 'agent', name: 'support' },
      auth: { mode: 'apikey' },
      ip_allowlist: ['10.0.0.0/8', '192.168.1.7/32'],
      rate_limit: { requests: 100, unit: 'minute', key: 'api_key' },
      created_at: T,
      updated_at: T,
      keys: [
        { key_id: 'k1', note: 'mobile app', state: 'live', created_at: T, superseded: false },
        { key_id: 'k2', note: '', state: 'revoked', created_at: T, superseded: false },
      ],
      domain: { hostname: 'api.example.com', verified: false, record: { type: 'CNAME', name: 'api.example.com', value: 'public-api-abc123.gw.localhost' }, note: '', created_at: T },
    }),
    'topics.get': () => ({
      name: 'orders',
      path: 'projects/abc123/topics/orders',
      max_bytes: '16Mi',
      discard: 'old',
      address: 'persistent://p-abc123/main/orders',
      created_at: T,
      state: 'ready',
      ready: true,
      stats: { published: 12, delivered: 9, published_bytes: 1200, delivered_bytes: 900, storage_bytes: 300, backlog_bytes: 300, subscriptions: 2, producers: 1 },
    }),
    'subscriptions.list': () => ({ subscriptions: [sub('workers', { backlog: 3, oldest: 125 }), sub('audit', { backlog: 0 })] }),
    'subscriptions.get': () => sub('workers', { backlog: 3, oldest: 125, push: true }),
    'indexes.get': () => ({
      index: {
        name: 'docs', resource_path: 'projects/abc123/indexes/docs', collection: 'p_abc123_docs', dimensions: 384, distance: 'cosine', on_disk: false, payload_on_disk: true,
        quantization: { kind: 'none', always_ram: false }, shards: 1, replicas: 1, state: 'ready', ready: true, collection_status: 'yellow',
        points_count: 0, vectors_count: 0, segments_count: 1, created_at: T, payload_indexes: [{ field: 'lang', type: 'keyword' }],
      },
    }),
    'indexes.count': () => ({ index: 'docs', count: 1234 }),
    'cache.get': () => ({
      name: 'sessions', resource_path: 'projects/abc123/memorystores/sessions', project_id: 'abc123', size_class: 'small', version: '7.2', maxmemory_policy: 'allkeys-lru',
      persistence: { enabled: true, size: '2Gi' }, state: 'ready', ready: true, external_exposure: true, externally_reachable: true, external_endpoint: 'rediss://127.0.0.1:40123',
      reachable_scope: 'internet', memory_limit: '256Mi', maxmemory: '192Mi', ready_replicas: 1, replicas: 1,
      connection: { host: '127.0.0.1', port: 40122, username: 'default', credential_secret: 'memorystore-sessions' }, conditions: [], created_at: T,
    }),
    'cache.stats': () => ({ memorystore: 'sessions', name: 'sessions', used_memory_bytes: 1_572_864, used_memory_human: '1.50M', maxmemory_bytes: 201_326_592, used_memory_pct: 0.78, keyspace_hits: 90, keyspace_misses: 10, hit_rate: 0.9, db_keys: 42, evicted_keys: 0, expired_keys: 3, note: '' }),
    'health.get': () => ({ status: 'ok', version: '1.4.0', dependencies: { database: { status: 'ok', critical: true }, broker: { status: 'ok', critical: true } } }),
  };
  function sub(name: string, o: { backlog: number; oldest?: number; push?: boolean }) {
    return {
      name, path: `projects/abc123/topics/orders/subscriptions/${name}`, topic: 'orders', type: 'shared', ack_deadline_seconds: 30, max_deliver: 5, start_from: 'all', max_ack_pending: 1000,
      deliver: o.push ? { mode: 'push', push: { url: 'http://127.0.0.1:9000/hook', content_mode: 'cloudevents-binary' } } : { mode: 'pull' },
      ...(o.push ? { dead_letter: { topic: 'orders-dead', after_attempts: 5 } } : {}),
      address: `persistent://p-abc123/main/orders/subscription/${name}`, created_at: T, state: 'ready', ready: true,
      stats: { backlog: o.backlog, unacknowledged: 1, delivered: 4, consumers: 0, redeliver_rate: 0, ...(o.oldest !== undefined ? { oldest_unacked_age_seconds: o.oldest } : {}) },
    };
  }

  function target(over: Record<string, Answer> = {}): StatusTarget {
    const answers = { ...views, ...over };
    const client = {
      baseUrl: 'http://127.0.0.1:7070',
      call: async (route: { id: string }, input: unknown) => {
        const answer = answers[route.id];
        if (!answer) throw new Error(`no answer for ${route.id} in this test`);
        return answer(input);
      },
    } as unknown as ApiClient;
    return { client, project: 'default', local: { version: '1.4.0', url: 'http://127.0.0.1:7070', pid: process.pid, isolation: 'bubblewrap', isolation_detail: 'each workload sees only its revision' } };
  }

  const kinds = snapshot({
    mcp: { rows: [row('tools')] },
    triggers: { rows: [row('nightly', 'schedule')] },
    gateway: { rows: [row('public-api', 'pending_verification')] },
    messaging: { rows: [row('orders', 'ready', { ref: { type: 'topic', topic: 'orders' } }), row('orders/workers', 'ready', { ref: { type: 'subscription', topic: 'orders', sub: 'workers' } })] },
    indexes: { rows: [row('docs')] },
    caches: { rows: [row('sessions')] },
  });

  async function details(t: StatusTarget, pane: string, moves: string, name: string, size = { columns: 140, rows: 40 }): Promise<{ frame: string; app: App }> {
    const backend: StatusBackend = { ...fakeBackend({ snap: kinds }).backend, details: (p, r) => detailsFor(t, p, r) };
    const app = await mount({ backend, ...size });
    // The pane's first row shares its line with the pane list's marker, so look for "> NAME " anywhere.
    const selected = (f: string) => f.includes(`> ${name} `);
    await press(app, pane, (f) => f.includes(`>${pane} `));
    for (const m of moves) app.stdin.write(m);
    await until(() => selected(app.lastFrame()!), app, `${name} selected`);
    app.stdin.write('\r');
    const frame = await until(() => app.lastFrame()!.includes(`details: `) && !app.lastFrame()!.includes('loading…'), app, `the details of ${name}`);
    return { frame, app };
  }

  it('an MCP server: state, endpoint, versions newest first with the serving one, its tools and the last error', async () => {
    const { frame } = await details(target(), '3', '', 'tools');
    expect(frame).toContain('details: MCP servers tools');
    // The newest version failed: the server says so, and version 2 keeps serving.
    expect(frame).toContain('MCP server tools: failed · private (inside the platform)');
    expect(frame).toContain('endpoint http://127.0.0.1:7071/mcp/abc123/tools/mcp');
    expect([...frame.matchAll(/ (v\d) +(?:ready|failed) /g)].map((m) => m[1])).toEqual(['v3', 'v2', 'v1']);
    expect(frame).toMatch(/v2 +ready +2 tools .*\(serving\)/);
    const tools = frame.slice(frame.indexOf('tools of the serving version v2:'), frame.indexOf('last error'));
    // The serving version's tools, not the failed set's; the current set's descriptions do not describe them.
    expect(tools).toMatch(/ add\s/);
    expect(tools).toMatch(/ echo\s/);
    expect(tools).not.toContain('bad');
    expect(tools).not.toContain('Add two numbers.');
    expect(frame).toContain('last error: version 3 failed to build: tools/bad.py, line 1: SyntaxError: invalid syntax; version 2 keeps serving');
  });

  it("an MCP server whose serving version holds the current set shows its tools' descriptions", async () => {
    const t = target({
      'mcpservers.get': () => ({ mcp_server: { ...(views['mcpservers.get']!(undefined) as any).mcp_server, state: 'ready', ready: true, message: undefined } }),
      'mcpservers.versions.list': () => ({ server: 'tools', versions: (views['mcpservers.versions.list']!(undefined) as any).versions.slice(1) }),
      'mcpservers.tools.list': () => ({ server: 'tools', tools: (views['mcpservers.tools.list']!(undefined) as any).tools.slice(0, 2) }),
    });
    const { frame } = await details(t, '3', '', 'tools');
    expect(frame).toContain('MCP server tools: ready (ready)');
    expect(frame).toMatch(/add +Add two numbers\./);
    expect(frame).toMatch(/echo +Say it back\./);
    expect(frame).toContain('last error: none');
  });

  it('a trigger: kind, target, schedule and time zone, enabled, next run and the last deliveries', async () => {
    const { frame } = await details(target(), '4', '', 'nightly');
    expect(frame).toContain('trigger nightly: schedule · enabled yes');
    expect(frame).toContain('target function report · path /');
    expect(frame).toContain('schedule 0 3 * * * · time zone Europe/Paris');
    expect(frame).toMatch(/next run \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(in (1h5\dm|2h)\)/);
    expect(frame).toContain('last deliveries (newest first, 2 of 2, times in UTC):');
    expect(frame).toMatch(/2026-11-27 03:00:00 +failed +HTTP 500, 3 attempts, 3012 ms +HTTP 500: boom/);
    expect(frame).toMatch(/2026-11-26 03:00:00 +succeeded +HTTP 200, 1 attempt, 12 ms/);
  });

  it('a gateway endpoint: host and path, target, auth, keys, allow list, rate limit and the domain with its state', async () => {
    const { frame } = await details(target(), '5', '', 'public-api');
    expect(frame).toContain('endpoint public-api: pending_verification · waiting for the CNAME of api.example.com');
    expect(frame).toContain('host api.example.com:7070 · path /');
    expect(frame).toContain('target agent support');
    expect(frame).toContain('auth apikey');
    expect(frame).toContain('allow list 10.0.0.0/8, 192.168.1.7/32');
    expect(frame).toContain('rate limit 100 per minute by api_key');
    expect(frame).toContain('domain api.example.com: not verified');
    expect(frame).toContain('needs CNAME api.example.com -> public-api-abc123.gw.localhost');
    expect(frame).toContain('keys: 2 keys, 1 live');
    expect(frame).toMatch(/mobile app +live +k1/);
    expect(frame).toMatch(/k2 +revoked +k2/);
  });

  it('a topic lists its subscriptions with their backlog; a subscription its topic, delivery, dead letter, backlog and oldest unacked age', async () => {
    let { frame, app } = await details(target(), '6', '', 'orders');
    expect(frame).toContain('topic orders: ready');
    expect(frame).toMatch(/workers +pull +backlog 3 +unacked 1 +oldest 2m/);
    expect(frame).toMatch(/audit +pull +backlog 0 +unacked 1 +oldest none waiting/);
    app.unmount();
    ({ frame, app } = await details(target(), '6', 'j', 'orders/workers'));
    expect(frame).toContain('details: topics/subs orders/workers');
    expect(frame).toContain('subscription workers of topic orders: ready');
    expect(frame).toContain('delivery push to http://127.0.0.1:9000/hook (cloudevents-binary) · type shared');
    expect(frame).toContain('ack deadline 30s · max unacked 1000');
    expect(frame).toContain('dead letter to topic orders-dead after 5 attempts');
    expect(frame).toContain('backlog 3 · unacked 1 · oldest unacked 2m');
  });

  it('an index: dimensions, distance, live points, yellow status with its message, payload indexes', async () => {
    const { frame } = await details(target(), '7', '', 'docs');
    expect(frame).toContain('index docs: ready · status yellow: the search graph is being rebuilt; queries are exact scans meanwhile');
    expect(frame).toContain('dimensions 384 · distance cosine');
    expect(frame).toContain("live points 1234 (the view's count, refreshed on a timer: 0)");
    expect(frame).toContain('payload indexes:');
    expect(frame).toMatch(/lang +keyword/);
  });

  it('a cache: size class, memory used / max, hit rate, keys, eviction, persistence, TLS and address', async () => {
    const { frame } = await details(target(), '8', '', 'sessions');
    expect(frame).toContain('size class small · memory limit 256Mi · maxmemory 192Mi');
    expect(frame).toContain('eviction allkeys-lru');
    expect(frame).toContain('persistence on (append-only, 2Gi)');
    expect(frame).toContain('address 127.0.0.1:40122');
    expect(frame).toContain('TLS on the external endpoint rediss://127.0.0.1:40123');
    expect(frame).toContain('memory 1.50M of 192.0MiB (0.8%)');
    expect(frame).toContain('hit rate 90.0% (90 hits, 10 misses) · keys 42');
  });

  it('details take the whole width at 80×24: the pane list steps aside, lines are cut only past 80 columns', async () => {
    const { frame, app } = await details(target(), '8', '', 'sessions', { columns: 80, rows: 24 });
    expect(frame).toContain('size class small · memory limit 256Mi · maxmemory 192Mi · version 7.2');
    expect(frame).not.toContain('agents/functions');
    for (const l of frame.split('\n')) expect(l.length).toBeLessThanOrEqual(80);
    await press(app, '\x1b', (f) => f.includes('caches (1)') && f.includes('agents/functions'), 'the pane list back');
  });

  it('the daemon: address, version, uptime, isolation, state directory, health and the sandbox pool', async () => {
    const { frame } = await details(target(), '9', '', 'address');
    expect(frame).toContain(`daemon http://127.0.0.1:7070 · pid ${process.pid}`);
    // Uptime is this test process's age from ps (unknown only when ps does not answer within 2 s under load).
    expect(frame).toMatch(/version 1\.4\.0 · uptime (\d+[smhd]+|unknown)/);
    expect(frame).toContain('isolation bubblewrap: each workload sees only its revision');
    expect(frame).toMatch(/state directory \S+/);
    expect(frame).toMatch(/database +ok \(critical\)/);
    expect(frame).toContain('sandbox pool: this daemon has no sandbox listener');
  });

  it('a read that fails is one line inside the details; the other reads still show and the dashboard stays', async () => {
    const t = target({ 'mcpservers.versions.list': failing('503 the build store is unavailable'), 'cache.stats': failing('stats did not answer within 3 s') });
    let { frame, app } = await details(t, '3', '', 'tools');
    expect(frame).toContain('versions: cannot read: 503 the build store is unavailable');
    expect(frame).toContain('endpoint http://127.0.0.1:7071/mcp/abc123/tools/mcp');
    expect(frame).toContain('unknown: the versions could not be read');
    await press(app, '\x1b', (f) => f.includes('MCP servers (1)'), 'back on the dashboard');
    app.unmount();
    ({ frame, app } = await details(t, '8', '', 'sessions'));
    expect(frame).toContain('eviction allkeys-lru');
    expect(frame).toContain('live stats: cannot read: stats did not answer within 3 s');
    app.unmount();
    // Even the main read failing leaves the details open with its reason.
    ({ frame, app } = await details(target({ 'triggers.get': failing('404 trigger nightly not found') }), '4', '', 'nightly'));
    expect(frame).toContain('trigger nightly: cannot read: 404 trigger nightly not found');
    await press(app, '\x1b', (f) => f.includes('triggers (1)'), 'back on the dashboard');
  });
});
