import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startTestDaemon } from '../helpers/daemon.js';
import { HELLO_PY, archive, deployForm, waitState } from './helpers.js';

const home = mkdtempSync(join(tmpdir(), 'platform-retention-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));

describe('builds across a daemon restart', () => {
  it('a build claimed by a daemon that died and a queued one both run on the next start', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'platform-requeue-'));
    const { workloadConfigFromEnv } = await import('../../src/daemon/config.js');
    // No builder slots: both builds stay queued while this daemon runs.
    const a = await startTestDaemon({ workloads: { ...workloadConfigFromEnv({}), buildConcurrency: 0 } }, { home: dir });
    const token = await a.adminToken();
    for (const name of ['claimed', 'queued']) expect((await deployForm(a, token, { name, framework: 'function' }, archive({ 'main.py': HELLO_PY }))).status).toBe(202);
    // As if a builder had claimed one and then the daemon was killed mid-build.
    a.db.prepare(`UPDATE agents_builds SET state = 'running', claimed_at = ? WHERE agent_id = (SELECT id FROM agents_agents WHERE name = 'claimed')`).run(new Date().toISOString());
    await a.close();
    const b = await startTestDaemon({ invokeAuthRequired: false }, { home: dir });
    try {
      const bt = await b.adminToken();
      for (const name of ['claimed', 'queued']) {
        expect(await waitState(b, bt, name, 'ready')).toMatchObject({ latest_revision: `${name}-00001` });
        expect((await b.api('POST', `/v1/agents/${name}/invoke`, { body: { message: name } })).body.reply).toBe(`hello ${name}`);
      }
    } finally {
      await b.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('persisted logs retention and restart', () => {
  it('prunes lines older than LOG_RETENTION and keeps serving after a restart', async () => {
    const a = await startTestDaemon({ invokeAuthRequired: false }, { home });
    const token = await a.adminToken();
    expect((await deployForm(a, token, { name: 'keep', framework: 'function' }, archive({ 'main.py': HELLO_PY }))).status).toBe(202);
    await waitState(a, token, 'keep', 'ready');
    expect((await a.api('POST', '/v1/agents/keep/invoke', { body: { message: 'old' } })).status).toBe(200);
    const before = (await a.api('GET', '/v1/agents/keep/logs/history', { token })).body.count;
    expect(before).toBeGreaterThan(0);
    await a.close();

    // Age every line past the 14-day window, then restart: the sweep runs at start.
    const fifteenDaysAgo = new Date(Date.now() - 15 * 86_400_000).toISOString();
    const b0 = await import('better-sqlite3');
    const db = new b0.default(join(home, 'platform.db'));
    db.prepare('UPDATE agents_logs SET ts = ?').run(fifteenDaysAgo);
    db.close();

    const b = await startTestDaemon({ invokeAuthRequired: false }, { home });
    try {
      const bt = await b.adminToken();
      const hist = await b.api('GET', '/v1/agents/keep/logs/history', { token: bt });
      expect(hist.body.count).toBe(0);
      expect(hist.body.note).toMatch(/kept 14 days/);
      const agent = await b.api('GET', '/v1/agents/keep', { token: bt });
      expect(agent.body).toMatchObject({ state: 'ready', latest_revision: 'keep-00001' });
      expect((await b.api('POST', '/v1/agents/keep/invoke', { body: { message: 'new' } })).body.reply).toBe('hello new');
    } finally {
      await b.close();
    }
  });
});
