import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { apiCall, DAEMON_BUNDLE, loginToken, spawnDaemonProcess, spawnedHome } from '../helpers/daemon-process.js';

/**
 * The master key is no longer stat'ed on every use: its directory is watched, and a key with no
 * change seen is trusted for at most a second (docs/decisions/speed-daemon.md, "Fourth pass").
 * What must not change (docs/decisions/secrets.md, "Seal state is the file"): the request right
 * after the key file was removed, replaced by another key (rotation, in place or by rename) or
 * put back sees that, not the key it used a moment before. Each step below follows a request
 * that just used the key, with no wait between the change and the next request; a watch that
 * missed the change would answer from the remembered key for up to a second and fail.
 */
const state = spawnedHome('platform-master-key-');
let token: string;
let keyFile: string;
let good: Buffer;
/** A valid key (32 bytes, base64) that is not the store's: a rotation the store refuses ("does not match"). */
const other = Buffer.alloc(32, 7).toString('base64') + '\n';

const list = () => apiCall(state.proc!.url, 'GET', '/v1/projects/default/secrets', token);
async function expectOpen(): Promise<void> {
  const r = await list();
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect(r.body.secrets.map((s: { name: string }) => s.name)).toContain('kept');
}
async function expectSealed(why: RegExp): Promise<void> {
  const r = await list();
  expect(r.status, JSON.stringify(r.body)).toBe(503);
  expect(r.body.error).toMatch(why);
}

beforeAll(async () => {
  state.proc = await spawnDaemonProcess(state.home, {}, 30_000, DAEMON_BUNDLE);
  token = await loginToken(state.proc.url);
  expect((await apiCall(state.proc.url, 'POST', '/v1/projects/default/secrets', token, { name: 'kept', value: 'v' })).status).toBe(201);
  keyFile = join(state.home, 'keys', 'secrets-master.key');
  good = readFileSync(keyFile);
}, 60_000);

describe('the master key file, watched instead of stat on every use', () => {
  it('sees the key removed and put back by the very next request, again and again', async () => {
    for (let i = 0; i < 10; i++) {
      await expectOpen();
      renameSync(keyFile, keyFile + '.away');
      await expectSealed(/sealed/);
      renameSync(keyFile + '.away', keyFile);
      await expectOpen();
    }
  });

  it('honours a rotation at once, written in place or renamed over the file', async () => {
    for (let i = 0; i < 5; i++) {
      await expectOpen();
      writeFileSync(keyFile, other);
      await expectSealed(/does not match/);
      writeFileSync(keyFile, good);
      await expectOpen();
      writeFileSync(keyFile + '.new', other, { mode: 0o600 });
      renameSync(keyFile + '.new', keyFile);
      await expectSealed(/does not match/);
      writeFileSync(keyFile + '.new', good, { mode: 0o600 });
      renameSync(keyFile + '.new', keyFile);
      await expectOpen();
    }
  });

  it('follows the keys directory when it is moved away and replaced', async () => {
    const dir = join(state.home, 'keys');
    await expectOpen();
    renameSync(dir, dir + '.old');
    await expectSealed(/sealed/);
    mkdirSync(dir, { mode: 0o700 });
    writeFileSync(keyFile, good, { mode: 0o600 });
    await expectOpen();
    // The new directory is the one watched now: a change in it is seen at once too.
    writeFileSync(keyFile, other);
    await expectSealed(/does not match/);
    writeFileSync(keyFile, good);
    await expectOpen();
    rmSync(dir + '.old', { recursive: true, force: true });
    chmodSync(keyFile, 0o600);
  });
});
