import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { cast } from '../helpers/fixtures.js';
import { runtimeAvailable } from '../../src/daemon/runtimes/index.js';
import { triggersConfig } from '../../src/daemon/services/triggers/config.js';
import { deployRecorder, history, objectsPath, recorded, triggersPath, until } from './helpers.js';

/**
 * Object-store triggers on local buckets (folders under the state directory): an object put
 * through the API, or copied into the folder by hand, fires once with its own bytes as the body;
 * a file that arrived while the daemon was stopped fires after start; nothing fires twice.
 */
const python = await runtimeAvailable('python');
if (!python.ok) console.warn(`SKIPPED: object-store triggers: ${python.reason}`);

const home = mkdtempSync(join(tmpdir(), 'platform-trg-obj-'));
const config = { triggers: { ...triggersConfig({}), objectSettleMs: 100 } };
let d: TestDaemon;
let c: Awaited<ReturnType<typeof cast>>;
let p: string;
let bucket: string;

beforeAll(async () => {
  if (!python.ok) return;
  d = await startTestDaemon(config, { home });
  c = await cast(d);
  p = c.project.id;
  bucket = join(home, 'objects', c.project.short, 'inbox');
  await deployRecorder(d, c.member.token, c.project.slug);
  const r = await d.api('POST', triggersPath(p), {
    token: c.member.token,
    body: { name: 'on-upload', target: { service: 'recorder' }, source: { type: 'objectstore', objectstore: { bucket: 'inbox', prefix: 'in/' } } },
  });
  expect(r.status, r.text).toBe(202);
}, 120_000);
afterAll(async () => {
  await d?.close();
  rmSync(home, { recursive: true, force: true });
});

const events = () => recorded(d, c.member.token, c.project.slug);
const succeeded = async () => (await history(d, c.member.token, p, 'on-upload')).filter((f: any) => f.status === 'succeeded');

describe.skipIf(!python.ok)('object-store triggers', () => {
  it('an object put through the API fires once, with its own bytes as the body', { timeout: 30_000 }, async () => {
    const put = await d.api('PUT', `${objectsPath(p, 'inbox')}/in/a.txt`, { token: c.member.token, raw: 'hello object' });
    expect(put.status, put.text).toBe(201);
    expect(put.body).toMatchObject({ bucket: 'inbox', key: 'in/a.txt', size: 12 });
    // Bytes that are not UTF-8 arrive unchanged (the python shim hands them over as data_base64).
    const bin = await fetch(`${d.url}${objectsPath(p, 'inbox')}/in/b.bin`, { method: 'PUT', headers: { authorization: `Bearer ${c.member.token}` }, body: new Uint8Array([0xff, 0x00, 0x10]) });
    expect(bin.status).toBe(201);
    // Outside the prefix: stored, never fired.
    expect((await d.api('PUT', `${objectsPath(p, 'inbox')}/other/c.txt`, { token: c.member.token, raw: 'not for us' })).status).toBe(201);
    const seen = await until(events, (e) => e.length >= 2);
    const text = seen.find((e) => e.data === 'hello object');
    expect(text._cloudevent).toMatchObject({ type: 'ai.platform.trigger.objectstore.v1', subject: 'in/a.txt' });
    expect(seen.find((e) => e.data_base64 === Buffer.from([0xff, 0x00, 0x10]).toString('base64'))).toBeTruthy();
    expect(await until(succeeded, (f) => f.length >= 2)).toHaveLength(2);
  });

  it('a plain file copy into the bucket folder fires once it has settled', { timeout: 30_000 }, async () => {
    mkdirSync(join(bucket, 'in', 'deep'), { recursive: true });
    writeFileSync(join(bucket, 'in', 'deep', 'copied.txt'), 'copied by hand');
    const seen = await until(events, (e) => e.some((x) => x.data === 'copied by hand'));
    expect(seen.filter((x) => x.data === 'copied by hand')).toHaveLength(1);
    expect(seen.find((x) => x.data === 'copied by hand')._cloudevent.subject).toBe('in/deep/copied.txt');
    expect(await until(succeeded, (f) => f.length >= 3)).toHaveLength(3);
    const list = await d.api('GET', `${objectsPath(p, 'inbox')}?prefix=in/`, { token: c.member.token });
    expect(list.body.objects.map((o: any) => o.key)).toEqual(['in/a.txt', 'in/b.bin', 'in/deep/copied.txt']);
  });

  it('a file that arrived while the daemon was stopped fires after start; the others do not fire again', { timeout: 60_000 }, async () => {
    await d.close();
    writeFileSync(join(bucket, 'in', 'offline.txt'), 'arrived while down');
    d = await startTestDaemon(config, { home });
    const seen = await until(events, (e) => e.some((x) => x.data === 'arrived while down'), 45_000, 100);
    expect(seen.filter((x) => x.data === 'arrived while down')).toHaveLength(1);
    const fs = await until(succeeded, (f) => f.length >= 4, 20_000);
    expect(fs).toHaveLength(4);
    // A rewrite of a key is a new object version: it fires again, once.
    expect((await d.api('PUT', `${objectsPath(p, 'inbox')}/in/a.txt`, { token: c.member.token, raw: 'hello again' })).status).toBe(201);
    await until(succeeded, (f) => f.length >= 5);
    expect((await events()).filter((x) => x.data === 'hello object' || x.data === 'hello again')).toHaveLength(2);
    // Delete through the API.
    expect((await d.api('DELETE', `${objectsPath(p, 'inbox')}/in/a.txt`, { token: c.member.token })).status).toBe(204);
    expect((await d.api('GET', `${objectsPath(p, 'inbox')}/in/a.txt`, { token: c.member.token })).status).toBe(404);
  });
});
