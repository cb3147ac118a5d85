import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { until } from '../helpers/until.js';
import type { LogLine } from '../../src/api/agents.js';
import { ApiClient } from '../../src/client/api-client.js';
import { LogsView } from '../../src/tui/logs/LogsView.js';
import { agentLogSource } from '../../src/tui/logs/sources.js';
import type { TestDaemon } from '../helpers/daemon.js';
import { HELLO_PY, archive, deployForm, useAgentDaemon, waitState } from '../agents/helpers.js';

let d: TestDaemon;
let token: string;
useAgentDaemon((daemon, admin) => {
  d = daemon;
  token = admin;
});

const invoke = (name: string, message: string) => d.api('POST', `/v1/agents/${name}/invoke`, { body: { message } });

describe('agentLogSource against a real daemon', { timeout: 60_000 }, () => {
  it('delivers history, then live lines once each, and follows a redeploy with a revision marker in the view', async () => {
    expect((await deployForm(d, token, { name: 'tail', framework: 'function' }, archive({ 'main.py': HELLO_PY }))).status).toBe(202);
    await waitState(d, token, 'tail', 'ready');
    expect((await invoke('tail', 'before')).status).toBe(200);

    const client = new ApiClient(d.url, token);
    const lines: LogLine[] = [];
    const errors: string[] = [];
    const stop = agentLogSource(client, { name: 'tail', retryMs: 50 }).subscribe((l) => lines.push(l), (m) => errors.push(m));
    const view = render(<LogsView title="agent tail" source={agentLogSource(client, { name: 'tail', retryMs: 50 })} onBack={() => undefined} rows={40} columns={120} color={false} />);
    try {
      // History: the line logged before anyone followed.
      await until(() => lines.some((l) => l.message === 'handling before'), 'the persisted line');
      expect(lines.find((l) => l.message === 'handling before')).toMatchObject({ revision: 'tail-00001', stream: 'stdout', instance: expect.stringMatching(/^tail-00001-[0-9a-f]{6}$/) });

      // Live: a line logged now arrives, and the live stream's replay of the instance's recent lines is not delivered twice.
      expect((await invoke('tail', 'live')).status).toBe(200);
      await until(() => lines.some((l) => l.message === 'handling live'), 'the live line');
      expect(lines.filter((l) => l.message === 'handling before')).toHaveLength(1);
      expect(lines.filter((l) => l.message === 'handling live')).toHaveLength(1);

      // A redeploy: the new revision's instance replaces the old one and the follow moves on to it.
      expect((await d.api('PUT', '/v1/agents/tail/files/main.py', { token, body: { content: HELLO_PY.replace('"handling"', '"serving"') } })).status).toBe(200);
      expect((await d.api('POST', '/v1/agents/tail/redeploy', { token })).status).toBe(202);
      const deadline = Date.now() + 30_000;
      while ((await d.api('GET', '/v1/agents/tail', { token })).body.serving_revision !== 'tail-00002') {
        if (Date.now() > deadline) throw new Error('tail-00002 never served');
        await new Promise((r) => setTimeout(r, 50));
      }
      expect((await invoke('tail', 'after')).status).toBe(200);
      const after = await until(() => lines.find((l) => l.message === 'serving after'), 'the new revision line');
      expect(after.revision).toBe('tail-00002');
      expect(after.instance).toMatch(/^tail-00002-[0-9a-f]{6}$/);
      // In order: nothing of the new revision before the old one's lines.
      expect(lines.findIndex((l) => l.revision === 'tail-00002')).toBeGreaterThan(lines.findIndex((l) => l.message === 'handling live'));
      expect(lines.filter((l) => l.message === 'handling live')).toHaveLength(1);

      const frame = await until(() => {
        const f = view.lastFrame() ?? '';
        return f.includes('serving after') ? f : undefined;
      }, 'the view to show the new revision');
      const rows = frame.split('\n');
      const marker = rows.indexOf('── revision tail-00002 ──');
      expect(rows).toContain('── revision tail-00001 ──');
      expect(marker).toBeGreaterThan(rows.indexOf('── revision tail-00001 ──'));
      expect(rows.findIndex((r) => r.endsWith('serving after'))).toBeGreaterThan(marker);
      expect(errors).toEqual([]);
    } finally {
      stop();
      view.unmount();
    }
  });

  it('ends with the daemon\'s answer for an agent that does not exist', async () => {
    const errors: string[] = [];
    const stop = agentLogSource(new ApiClient(d.url, token), { name: 'nobody' }).subscribe(() => undefined, (m) => errors.push(m));
    try {
      await until(() => errors.length > 0, 'the error');
      expect(errors[0]).toMatch(/nobody/);
    } finally {
      stop();
    }
  });
});
