import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { archive } from '../agents/helpers.js';
import { DAEMON_MAIN, loginToken, spawnDaemonProcess, type DaemonProcess } from '../helpers/daemon-process.js';

/**
 * Session turns are committed in groups (the turns of invokes that finish together share one
 * transaction; docs/decisions/speed-daemon.md). What must hold whatever the grouping: an invoke
 * answers only once its turn is committed, so the caller's next turn reads it, and an
 * acknowledged turn survives kill -9 of the daemon.
 */
const ECHO_PY = `def handle(event):
    history = event.get("history", [])
    return {"output": "turn %d: %s" % (len(history) + 1, event["message"]), "seen": [h["message"] for h in history]}
`;

const home = mkdtempSync(join(tmpdir(), 'platform-turn-commit-'));
const daemons: DaemonProcess[] = [];
afterAll(async () => {
  for (const d of daemons) if (d.child.exitCode === null && d.child.signalCode === null) d.child.kill('SIGTERM');
  await Promise.all(daemons.map((d) => d.exited));
  rmSync(home, { recursive: true, force: true });
});

async function call(url: string, token: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const r = await fetch(url + path, { method, headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
  const text = await r.text();
  return { status: r.status, body: text ? JSON.parse(text) : undefined };
}

const sessionIds = Array.from({ length: 24 }, (_, i) => `commit-${i}-${Math.random().toString(36).slice(2)}-0123456789`);

describe.skipIf(!existsSync(DAEMON_MAIN))('session turns committed in groups', () => {
  it('concurrent invokes: each next turn sees the one before; every acknowledged turn survives kill -9', async () => {
    const first = await spawnDaemonProcess(home, { PLATFORM_SCALE_TO_ZERO_SECONDS: '600' });
    daemons.push(first);
    const token = await loginToken(first.url);
    const form = new FormData();
    form.append('name', 'echo');
    form.append('framework', 'function');
    form.append('runtime', 'python');
    form.append('code', new Blob([new Uint8Array(archive({ 'main.py': ECHO_PY }))]), 'code.tar.gz');
    const deployed = await fetch(`${first.url}/v1/agents`, { method: 'POST', body: form, headers: { authorization: `Bearer ${token}` } });
    expect(deployed.status, await deployed.text()).toBe(202);
    for (const end = Date.now() + 60_000; ; ) {
      const a = await call(first.url, token, 'GET', '/v1/agents/echo');
      if (a.body.state === 'ready') break;
      expect(a.body.state, JSON.stringify(a.body)).not.toBe('failed');
      expect(Date.now(), 'echo did not become ready').toBeLessThan(end);
      await new Promise((r) => setTimeout(r, 50));
    }

    // 24 sessions, three turns each, all in flight together: turns finishing at once share a commit.
    const invoke = (sid: string, message: string) => call(first.url, token, 'POST', '/v1/agents/echo/invoke', { session_id: sid, message });
    for (const turn of [1, 2, 3]) {
      const answers = await Promise.all(sessionIds.map((sid) => invoke(sid, `m${turn}`)));
      for (const a of answers) {
        expect(a.status, JSON.stringify(a.body)).toBe(200);
        // The next turn, sent once the previous one was answered, always reads it.
        expect(a.body.output).toBe(`turn ${turn}: m${turn}`);
        expect(a.body.seen).toEqual(['m1', 'm2', 'm3'].slice(0, turn - 1));
      }
    }

    // Killed right after the last acknowledgements: nothing is flushed on the way out.
    first.child.kill('SIGKILL');
    await first.exited;
    expect(first.child.signalCode).toBe('SIGKILL');

    const second = await spawnDaemonProcess(home, { PLATFORM_SCALE_TO_ZERO_SECONDS: '600' });
    daemons.push(second);
    const token2 = await loginToken(second.url);
    for (const sid of sessionIds) {
      const s = await call(second.url, token2, 'GET', `/v1/agents/echo/sessions/${sid}`);
      expect(s.status, JSON.stringify(s.body)).toBe(200);
      expect(s.body.turns.map((t: { index: number; message: string }) => `${t.index}:${t.message}`)).toEqual(['1:m1', '2:m2', '3:m3']);
    }
  }, 120_000);
});
