import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { DAEMON_MAIN, loginToken, spawnDaemonProcess } from '../helpers/daemon-process.js';

const home = mkdtempSync(join(tmpdir(), 'platform-kill9-'));
const children: ChildProcess[] = [];

afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  rmSync(home, { recursive: true, force: true });
});

async function startReal() {
  const p = await spawnDaemonProcess(home);
  children.push(p.child);
  return p;
}

const post = (url: string, token: string, path: string, body: unknown) =>
  fetch(url + path, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify(body) });

describe.skipIf(!existsSync(DAEMON_MAIN))('durability: kill -9 of the real daemon in the middle of writes', () => {
  it('every acknowledged write survives and the database stays consistent', async () => {
    const first = await startReal();
    const token = await loginToken(first.url);
    const ackedKeys = new Set<string>();
    const ackedAccounts = new Set<string>();
    let killed = false;
    let failedAfterKill = 0;
    const TOTAL = 600;
    const KILL_AFTER = 150;
    let next = 0;
    // 16 concurrent writers alternating personal keys and service accounts; the daemon is killed
    // with SIGKILL while requests are in flight.
    const worker = async () => {
      while (next < TOTAL) {
        const i = next++;
        try {
          if (i % 2 === 0) {
            const r = await post(first.url, token, '/v1/users/me/keys', { display_name: `k${i}` });
            if (r.status === 201) ackedKeys.add(((await r.json()) as { key: { key_id: string } }).key.key_id);
          } else {
            const r = await post(first.url, token, '/v1/projects/default/service-accounts', { name: `sa-${i}` });
            if (r.status === 201) ackedAccounts.add(((await r.json()) as { service_account: { name: string } }).service_account.name);
          }
        } catch {
          if (!killed) throw new Error('request failed before the kill');
          failedAfterKill++;
          return; // the daemon is gone: this writer stops
        }
        if (!killed && ackedKeys.size + ackedAccounts.size >= KILL_AFTER) {
          killed = true;
          process.kill(first.pid, 'SIGKILL');
        }
      }
    };
    await Promise.all(Array.from({ length: 16 }, worker));
    await new Promise<void>((resolve) => (first.child.exitCode !== null || first.child.signalCode ? resolve() : first.child.once('exit', () => resolve())));
    expect(first.child.signalCode).toBe('SIGKILL');
    expect(ackedKeys.size + ackedAccounts.size).toBeGreaterThanOrEqual(KILL_AFTER);
    expect(failedAfterKill).toBeGreaterThan(0);

    // The integrity check runs on the files as the crash left them (WAL included).
    const raw = new Database(join(home, 'platform.db'));
    expect(raw.pragma('integrity_check', { simple: true })).toBe('ok');
    expect(raw.pragma('foreign_key_check')).toEqual([]);
    raw.close();

    const second = await startReal();
    try {
      const token2 = await loginToken(second.url);
      const keys = (await (await fetch(`${second.url}/v1/users/me/keys`, { headers: { authorization: `Bearer ${token2}` } })).json()) as { keys: { key_id: string }[] };
      const present = new Set(keys.keys.map((k) => k.key_id));
      for (const k of ackedKeys) expect(present.has(k), `acknowledged key ${k}`).toBe(true);
      const names = new Set<string>();
      let pageToken = '';
      do {
        const r = await fetch(`${second.url}/v1/projects/default/service-accounts?page_size=200${pageToken ? `&page_token=${pageToken}` : ''}`, {
          headers: { authorization: `Bearer ${token2}` },
        });
        const body = (await r.json()) as { service_accounts: { name: string }[]; next_page_token?: string };
        body.service_accounts.forEach((s) => names.add(s.name));
        pageToken = body.next_page_token ?? '';
      } while (pageToken);
      for (const n of ackedAccounts) expect(names.has(n), `acknowledged service account ${n}`).toBe(true);

      // Each write is one transaction: no account without its grant and audit row, no key without its audit row.
      const db = new Database(join(home, 'platform.db'), { readonly: true });
      try {
        expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
        const orphanAccounts = db
          .prepare(
            `SELECT sa.name FROM acct_service_accounts sa WHERE NOT EXISTS (SELECT 1 FROM acct_project_members m WHERE m.service_account_id = sa.id)
             OR NOT EXISTS (SELECT 1 FROM acct_audit a WHERE a.action = 'service_account.create' AND a.details LIKE '%' || sa.id || '%')`,
          )
          .all();
        expect(orphanAccounts).toEqual([]);
        const orphanKeys = db
          .prepare(`SELECT k.key_id FROM acct_api_keys k WHERE k.kind = 'personal' AND NOT EXISTS (SELECT 1 FROM acct_audit a WHERE a.action = 'key.create' AND a.target = k.key_id)`)
          .all();
        expect(orphanKeys).toEqual([]);
        const auditOnly = db
          .prepare(`SELECT a.target FROM acct_audit a WHERE a.action = 'key.create' AND NOT EXISTS (SELECT 1 FROM acct_api_keys k WHERE k.key_id = a.target)`)
          .all();
        expect(auditOnly).toEqual([]);
      } finally {
        db.close();
      }
      console.info(`kill -9 durability: ${ackedKeys.size} keys and ${ackedAccounts.size} service accounts acknowledged before SIGKILL, all present after restart; ${failedAfterKill} requests in flight at the kill failed`);
    } finally {
      second.child.kill('SIGTERM');
      await new Promise((r) => second.child.once('exit', r));
    }
  }, 120_000);
});

if (!existsSync(DAEMON_MAIN)) console.warn(`SKIPPED durability test: ${DAEMON_MAIN} is missing (run npm run build)`);
