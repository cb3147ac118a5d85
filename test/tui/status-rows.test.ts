import { describe, expect, it } from 'vitest';
import type { AgentView } from '../../src/api/agents.js';
import type { SubscriptionView } from '../../src/api/messaging.js';
import { agentRow, subscriptionRow } from '../../src/tui/status/rows.js';
import { plainTable } from '../../src/tui/status/plain-table.js';
import { PANE_TITLES, firstLine, type Snapshot } from '../../src/tui/status/model.js';

const agent = (over: Partial<AgentView>): AgentView => ({
  name: 'hello',
  state: 'ready',
  ready: true,
  kind: 'function',
  framework: 'function',
  public_url: 'http://hello-abc123.apps.localhost:7070',
  traffic: [],
  active_traffic: [],
  owner: 'a@b.c',
  project_id: '00000000-0000-0000-0000-000000000000',
  created_at: '2026-01-01T00:00:00Z',
  updated_at: '2026-01-01T00:00:00Z',
  ...over,
});

describe('status rows', () => {
  it('a subscription says its backlog, and how old its oldest waiting message is when one waits', () => {
    const sub = (stats: Partial<SubscriptionView['stats']>) =>
      ({ name: 'workers', topic: 'orders', state: 'ready', ready: true, deliver: { mode: 'pull' }, stats: { backlog: 0, unacknowledged: 0, delivered: 0, consumers: 0, redeliver_rate: 0, ...stats } }) as SubscriptionView;
    expect(subscriptionRow(sub({ backlog: 2, oldest_unacked_age_seconds: 125 })).summary).toBe('backlog 2 unacked 0 pull consumers 0 oldest 2m');
    expect(subscriptionRow(sub({})).summary).toBe('backlog 0 unacked 0 pull consumers 0');
  });

  it('a failed agent says failed and why, skipping only the build header', () => {
    const r = agentRow(agent({ state: 'failed', ready: false, latest_revision: 'hello-00001', message: 'build 1 for hello\nframework adk needs "google-adk"' }));
    expect(r).toMatchObject({ state: 'failed', health: 'bad', error: 'framework adk needs "google-adk"', summary: 'function hello-00001 failed' });
    // "build failed: ..." is the reason itself, not a header to skip.
    expect(firstLine('build failed: missing main.py\nsecond line')).toBe('build failed: missing main.py');
  });

  it('a newer revision that failed leaves the row ready on the older one, with the failure', () => {
    const r = agentRow(
      agent({ latest_revision: 'hello-00003', serving_revision: 'hello-00002', message: 'revision hello-00003 failed to build (hello-00002 keeps serving): syntax error\n# more' }),
    );
    expect(r).toMatchObject({ state: 'ready', health: 'busy', summary: 'function hello-00002 http://hello-abc123.apps.localhost:7070' });
    expect(r.error).toBe('revision hello-00003 failed to build (hello-00002 keeps serving): syntax error');
  });

  it('the plain table has a line per row, "none" for an empty kind and "error" for one that failed', () => {
    const snap: Snapshot = {
      project: 'default',
      updated_at: '2026-11-27T10:11:12.000Z',
      daemon: { url: 'http://127.0.0.1:7070' },
      panes: [
        { id: 'workloads', title: PANE_TITLES.workloads, rows: [agentRow(agent({ latest_revision: 'hello-00001' }))] },
        { id: 'services', title: PANE_TITLES.services, rows: [] },
        { id: 'caches', title: PANE_TITLES.caches, rows: [], error: '503 cache store unavailable' },
      ],
    };
    const out = plainTable(snap).split('\n');
    expect(out[0]).toBe('project default · http://127.0.0.1:7070 · updated 10:11:12');
    expect(out[1]).toMatch(/^KIND +NAME +STATE +DETAIL$/);
    expect(out[2]).toMatch(/^workloads +hello +ready +function hello-00001 http:\/\/hello-abc123/);
    expect(out[3]).toMatch(/^services +- +none +-$/);
    expect(out[4]).toMatch(/^caches +- +error +503 cache store unavailable$/);
    expect(out.join('\n')).not.toMatch(/\x1b\[/);
  });
});
