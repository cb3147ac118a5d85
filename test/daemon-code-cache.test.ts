import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DAEMON_BUNDLE, loginToken, spawnDaemonProcess, type DaemonProcess } from './helpers/daemon-process.js';

/**
 * The bundle loads the daemon's code through a V8 code cache kept in the state directory
 * (src/daemon/code-cache.ts; docs/decisions/speed-daemon.md, "Start", "Third pass"). A start
 * without a usable cache writes one once every area started; a start with one uses it and leaves
 * it alone; a damaged, foreign or unwritable cache never fails a start.
 */
const homes: string[] = [];
const CACHE = 'daemon-code.cache';

function freshHome(): string {
  const home = mkdtempSync(join(tmpdir(), 'platform-code-cache-'));
  homes.push(home);
  return home;
}

async function stop(d: DaemonProcess): Promise<void> {
  d.child.kill('SIGTERM');
  await d.exited;
}

/** Waits until the cache file exists and differs from `not` (the daemon writes it once every area started). */
async function cacheWritten(home: string, not?: Buffer): Promise<Buffer> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    try {
      const data = readFileSync(join(home, CACHE));
      if (!not || !data.equals(not)) return data;
    } catch {
      // not yet
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('the daemon wrote no code cache within 15 s');
}

/** The daemon answers with its code fully working: a validated request (zod loaded by require) and a scrape (prom-client by import()). */
async function works(d: DaemonProcess): Promise<void> {
  const bad = await fetch(`${d.url}/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'a@b.test', password: 'x', nope: 1 }) });
  expect(bad.status).toBe(400);
  expect(((await bad.json()) as { error: string }).error).toBe('unknown body field: nope');
  const token = await loginToken(d.url);
  const scrape = await fetch(`${d.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  expect(scrape.status).toBe(200);
  expect(await scrape.text()).toMatch(/^# HELP /m);
}

/** A cache's first line without the digest of its data: what it was made from. */
const buildOf = (cache: Buffer) => cache.toString('latin1', 0, cache.indexOf(10)).slice(0, -64);

afterAll(() => {
  for (const h of homes) rmSync(h, { recursive: true, force: true });
});

describe('the daemon code cache', () => {
  it('is written private by a first start, then used as it is by the next', async () => {
    const home = freshHome();
    const first = await spawnDaemonProcess(home, {}, 20_000, DAEMON_BUNDLE);
    const written = await cacheWritten(home);
    await works(first);
    await stop(first);
    const st = statSync(join(home, CACHE));
    expect(st.mode & 0o777).toBe(0o600);
    expect(written.subarray(0, 29).toString()).toBe('platform code cache 1 daemon ');

    const second = await spawnDaemonProcess(home, {}, 20_000, DAEMON_BUNDLE);
    await works(second);
    await stop(second);
    // Accepted: a cache V8 rejected would have been written again.
    const after = statSync(join(home, CACHE));
    expect([after.ino, after.mtimeMs]).toEqual([st.ino, st.mtimeMs]);
    expect(readFileSync(join(home, CACHE)).equals(written)).toBe(true);
  }, 60_000);

  it('a damaged cache or one of another build is replaced, and the start does not notice', async () => {
    const home = freshHome();
    const first = await spawnDaemonProcess(home, {}, 20_000, DAEMON_BUNDLE);
    const good = await cacheWritten(home);
    await stop(first);

    // Bytes flipped in the middle of V8's data: the length, V8's version and flags still match.
    const damaged = Buffer.from(good);
    for (let i = Math.floor(damaged.length / 2); i < damaged.length / 2 + 64; i++) damaged[i] = damaged[i]! ^ 0xff;
    // The same data named after another build of the code.
    const foreign = Buffer.from(good.toString('latin1').replace(/^(platform code cache 1 daemon )[0-9a-f]{64}/, `$1${'0'.repeat(64)}`), 'latin1');
    for (const bad of [damaged, foreign]) {
      writeFileSync(join(home, CACHE), bad);
      const d = await spawnDaemonProcess(home, {}, 20_000, DAEMON_BUNDLE);
      await works(d);
      const rewritten = await cacheWritten(home, bad);
      await stop(d);
      expect(buildOf(rewritten)).toBe(buildOf(good));
    }
  }, 60_000);

  it('a cache that cannot be written leaves nothing behind, and the daemon works', async () => {
    const home = freshHome();
    // A directory where the cache goes: unreadable as a file, and no rename can replace it.
    mkdirSync(join(home, CACHE), { recursive: true });
    const d = await spawnDaemonProcess(home, {}, 20_000, DAEMON_BUNDLE);
    await works(d);
    await stop(d);
    expect(statSync(join(home, CACHE)).isDirectory()).toBe(true);
    expect(readdirSync(home).filter((n) => n.startsWith(`${CACHE}.`))).toEqual([]);
  }, 60_000);
});
