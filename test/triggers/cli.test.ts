import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliSandbox } from '../helpers/cli.js';

/**
 * `platform triggers` and `platform objects` against a real daemon the CLI starts: every command
 * in human and --json form, the source flags (one of --cron, --topic, --bucket), --max-attempts
 * and --backoff, the firing history as a table, usage errors (exit 2) and API errors with a next
 * step (exit 1). The target is a service whose image never runs: a delivery is retried (503).
 */
const cli = cliSandbox();
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'platform-trg-cli-'));
  const s = await cli.run(['services', 'create', 'web', '--image', 'platform-none:local', '--json']);
  expect(s.exitCode, s.stderr).toBe(0);
}, 60_000);
afterAll(async () => {
  await cli.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('platform triggers and objects', { timeout: 60_000 }, () => {
  it('create a schedule, list it with its next fire time, get it, update it', async () => {
    const c = await cli.run(['triggers', 'create', 'nightly', '--target', 'web', '--cron', '0 3 * * *', '--tz', 'Europe/Paris', '--payload', '{"job":"n"}', '--max-attempts', '4', '--backoff', '0.5,10,3', '--json']);
    expect(c.exitCode, c.stderr).toBe(0);
    expect(c.json).toMatchObject({
      name: 'nightly',
      target: { service: 'web', path: '/', kind: 'service' },
      source: { type: 'schedule', schedule: { cron: '0 3 * * *', time_zone: 'Europe/Paris', payload: '{"job":"n"}' } },
      retry: { max_attempts: 4, backoff: { initial_seconds: 0.5, maximum_seconds: 10, multiplier: 3 } },
    });
    const human = await cli.run(['triggers', 'list']);
    expect(human.exitCode).toBe(0);
    expect(human.stdout).toMatch(/name\s+target\s+source\s+next fire/i);
    expect(human.stdout).toContain('cron 0 3 * * * (Europe/Paris)');
    expect(human.stdout).toContain(c.json.next_fire_time);
    const u = await cli.run(['triggers', 'update', 'nightly', '--cron', '*/5 * * * *', '--json']);
    expect(u.exitCode, u.stderr).toBe(0);
    expect(u.json.source.schedule).toEqual({ cron: '*/5 * * * *', time_zone: 'UTC' });
    expect(u.json.retry.max_attempts).toBe(4);
  });

  it('fire runs one now; get shows the firing history as a table with attempts and the error', async () => {
    const f = await cli.run(['triggers', 'fire', 'nightly', '--json']);
    expect(f.exitCode, f.stderr).toBe(0);
    expect(f.json).toMatchObject({ status: 'pending', manual: true });
    let g;
    for (let i = 0; i < 200; i++) {
      g = await cli.run(['triggers', 'get', 'nightly', '--json']);
      if (g.json.firings[0]?.attempts >= 1 && g.json.firings[0].status !== 'delivering') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    // Retrying while its attempts go on (4 at 0.5 s backoff); on a machine slow enough that the CLI
    // reads it only after the last one, failed. Either way the table shows the state and the 503.
    expect(g!.json.firings[0]).toMatchObject({ status: expect.stringMatching(/^(retrying|failed)$/), http_status: 503 });
    expect(g!.json.firings[0].attempts).toBeGreaterThanOrEqual(1);
    expect(g!.json.firings[0].error).toMatch(/^status 503: /);
    const human = await cli.run(['triggers', 'get', 'nightly']);
    expect(human.stdout).toMatch(/scheduled\s+actual\s+attempts\s+status\s+duration\s+error/i);
    expect(human.stdout).toMatch(/(retrying|failed) \(503\) manual/);
  });

  it('usage errors exit 2; API errors exit 1 with a next step', async () => {
    const two = await cli.run(['triggers', 'create', 'x', '--target', 'web', '--cron', '* * * * *', '--topic', 't', '--json']);
    expect(two.exitCode).toBe(2);
    expect(two.json.error).toMatch(/--cron and --topic/);
    const none = await cli.run(['triggers', 'create', 'x', '--target', 'web']);
    expect(none.exitCode).toBe(2);
    expect(none.stderr).toMatch(/needs a source/);
    const stray = await cli.run(['triggers', 'create', 'x', '--target', 'web', '--bucket', 'b', '--tz', 'UTC']);
    expect(stray.exitCode).toBe(2);
    const badBackoff = await cli.run(['triggers', 'create', 'x', '--target', 'web', '--cron', '* * * * *', '--backoff', 'fast']);
    expect(badBackoff.exitCode).toBe(2);
    const target = await cli.run(['triggers', 'create', 'x', '--target', 'ghost', '--cron', '* * * * *', '--json']);
    expect(target.exitCode).toBe(1);
    expect(target.json).toMatchObject({ status: 404 });
    expect(target.json.next).toMatch(/services list/);
    const zone = await cli.run(['triggers', 'create', 'x', '--target', 'web', '--cron', '* * * * *', '--tz', 'Nowhere/Land']);
    expect(zone.exitCode).toBe(1);
    expect(zone.stderr).toMatch(/next: an IANA zone name/);
    const missing = await cli.run(['triggers', 'get', 'ghost']);
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toMatch(/triggers list/);
  });

  it('objects put, list, get and delete; a bucket trigger is created with --bucket/--prefix', async () => {
    const t = await cli.run(['triggers', 'create', 'on-upload', '--target', 'web', '--bucket', 'uploads', '--prefix', 'in/', '--json']);
    expect(t.exitCode, t.stderr).toBe(0);
    expect(t.json.source).toEqual({ type: 'objectstore', objectstore: { bucket: 'uploads', prefix: 'in/' } });
    const file = join(dir, 'notes.txt');
    writeFileSync(file, 'bytes of notes');
    const put = await cli.run(['objects', 'put', 'uploads', file, '--key', 'in/notes.txt', '--json']);
    expect(put.exitCode, put.stderr).toBe(0);
    expect(put.json).toMatchObject({ bucket: 'uploads', key: 'in/notes.txt', size: 14 });
    const list = await cli.run(['objects', 'list', 'uploads']);
    expect(list.stdout).toMatch(/in\/notes\.txt\s+14/);
    const get = await cli.run(['objects', 'get', 'uploads', 'in/notes.txt']);
    expect(get.stdout).toBe('bytes of notes');
    const out = join(dir, 'copy.txt');
    const getJson = await cli.run(['objects', 'get', 'uploads', 'in/notes.txt', '--output', out, '--json']);
    expect(getJson.json).toMatchObject({ size: 14, output: out });
    expect(readFileSync(out, 'utf8')).toBe('bytes of notes');
    // The put fired the bucket trigger (the target never runs, so it is retrying).
    const h = await cli.run(['triggers', 'get', 'on-upload', '--json']);
    expect(h.json.firings.length).toBe(1);
    const del = await cli.run(['objects', 'delete', 'uploads', 'in/notes.txt', '--yes', '--json']);
    expect(del.json).toEqual({ bucket: 'uploads', key: 'in/notes.txt', deleted: true });
    expect((await cli.run(['objects', 'get', 'uploads', 'in/notes.txt'])).exitCode).toBe(1);
    const bad = await cli.run(['objects', 'put', 'uploads', join(dir, 'absent')]);
    expect(bad.exitCode).toBe(2);
  });

  it('delete asks for --yes under --json, then removes the trigger', async () => {
    expect((await cli.run(['triggers', 'delete', 'nightly', '--json'])).exitCode).toBe(2);
    const d = await cli.run(['triggers', 'delete', 'nightly', '--yes', '--json']);
    expect(d.json).toEqual({ name: 'nightly', deleted: true });
    const l = await cli.run(['triggers', 'list', '--json']);
    expect(l.json.triggers.map((t: any) => t.name)).toEqual(['on-upload']);
  });
});
