import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { DAEMON_MAIN } from '../helpers/daemon-process.js';
import { runtimeAvailable } from '../../src/daemon/runtimes/index.js';
import { history, recorded, triggersPath, until } from './helpers.js';
import { ProcessDaemon } from './process.js';

/**
 * Schedules on the real daemon process. Real time first: a seconds schedule fires once when due.
 * Then the test-only clock (PLATFORM_TRIGGERS_TEST_CLOCK=<start>@600: ten clock minutes per real
 * second): an every-minute schedule, America/New_York across the March 2026 spring-forward, a
 * downtime of months (the daemon killed, restarted with the clock in November) after which each
 * schedule catches up exactly once, and the November fall-back where a repeated 01:30 fires once.
 */
const python = await runtimeAvailable('python');
const skip = !python.ok || !existsSync(DAEMON_MAIN);
if (skip) console.warn(`SKIPPED: schedules: ${python.ok ? 'dist not built' : python.reason}`);

const d = new ProcessDaemon(38100);
const path = () => triggersPath(d.projectId);
const create = async (name: string, cron: string, time_zone = 'UTC', payload?: string) => {
  const r = await d.api('POST', path(), { body: { name, target: { service: 'recorder' }, source: { type: 'schedule', schedule: { cron, time_zone, ...(payload ? { payload } : {}) } } } });
  expect(r.status, r.text).toBe(202);
  return r.body;
};
const get = async (name: string) => (await d.api('GET', `${path()}/${name}`)).body;
const scheduled = (fs: any[]) => fs.map((f) => f.scheduled_time).reverse();

beforeAll(async () => {
  if (skip) return;
  await d.start();
  await d.deployRecorder();
}, 120_000);
afterAll(async () => d.close());

describe.skipIf(skip)('schedules fire on time, across daylight saving and downtime', () => {
  it('real time: a seconds schedule fires once when due, with the payload as a CloudEvent body', { timeout: 20_000 }, async () => {
    const second = (new Date().getUTCSeconds() + 3) % 60;
    const t = await create('tick', `${second} * * * * *`, 'UTC', '{"job":"tick"}');
    const due = Date.parse(t.next_fire_time);
    expect(due - Date.now()).toBeLessThan(4_000);
    const fs = await until(() => history(d, d.token, d.projectId, 'tick'), (f) => f[0]?.status === 'succeeded', 10_000);
    expect(fs).toHaveLength(1);
    expect(fs[0].scheduled_time).toBe(new Date(due).toISOString());
    const lateness = Date.parse(fs[0].actual_time) - due;
    expect(lateness).toBeGreaterThanOrEqual(0);
    expect(lateness).toBeLessThan(500);
    expect(Date.parse((await get('tick')).next_fire_time)).toBe(due + 60_000);
    const events = (await recorded(d, d.token, 'default')).filter((e) => e.job === 'tick');
    expect(events).toHaveLength(1);
    expect(events[0]._cloudevent).toMatchObject({ type: 'ai.platform.trigger.schedule.v1', time: new Date(due).toISOString(), specversion: '1.0' });
    expect(events[0]._cloudevent.id).toBeTruthy();
    expect((await d.api('DELETE', `${path()}/tick`)).status).toBe(204);
  });

  it('test clock in March: every minute, and New York hours across the spring-forward (no skipped, no doubled run)', { timeout: 40_000 }, async () => {
    await d.stop();
    await d.start({ PLATFORM_TRIGGERS_TEST_CLOCK: '2026-03-08T05:30:00Z@600' });
    await create('hourly-ny', '0 * * * *', 'America/New_York');
    await create('half-two-ny', '30 2 * * *', 'America/New_York');
    await create('minutely', '* * * * *', 'UTC', '{"job":"minutely"}');
    const minutes = await until(() => history(d, d.token, d.projectId, 'minutely'), (f) => f.filter((x: any) => x.status === 'succeeded').length >= 4, 20_000);
    expect((await d.api('DELETE', `${path()}/minutely`)).status).toBe(204);
    const times = scheduled(minutes).map((s) => Date.parse(s));
    for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBe(60_000);
    expect(times.every((t) => t % 60_000 === 0)).toBe(true);

    // 01:00 EST is 06:00Z; 02:00 does not exist that night; 03:00 EDT is 07:00Z: one run per real hour.
    const hourly = await until(() => history(d, d.token, d.projectId, 'hourly-ny'), (f) => f.length >= 2, 25_000);
    expect(scheduled(hourly).slice(0, 2)).toEqual(['2026-03-08T06:00:00.000Z', '2026-03-08T07:00:00.000Z']);
    // 02:30 falls in the gap: it runs once, shifted forward by the gap (03:30 EDT = 07:30Z).
    const half = await until(() => history(d, d.token, d.projectId, 'half-two-ny'), (f) => f.length >= 1, 20_000);
    expect(scheduled(half)).toEqual(['2026-03-08T07:30:00.000Z']);
    expect((await get('half-two-ny')).next_fire_time).toBe('2026-03-09T06:30:00.000Z');
  });

  it('a downtime of months (kill -9), then November: each schedule catches up once; the repeated 01:30 fires once', { timeout: 40_000 }, async () => {
    const before = (await history(d, d.token, d.projectId, 'hourly-ny')).length;
    await d.kill9();
    await d.start({ PLATFORM_TRIGGERS_TEST_CLOCK: '2026-11-01T04:20:00Z@600' });
    await create('half-one-ny', '30 1 * * *', 'America/New_York');
    // The latest missed hour (00:00 EDT = 04:00Z) fires once, flagged; thousands of missed hours do not.
    const hourly = await until(() => history(d, d.token, d.projectId, 'hourly-ny'), (f) => f.some((x: any) => x.scheduled_time === '2026-11-01T05:00:00.000Z'), 20_000);
    const after = hourly.slice(0, hourly.length - before);
    expect(scheduled(after).slice(0, 2)).toEqual(['2026-11-01T04:00:00.000Z', '2026-11-01T05:00:00.000Z']);
    expect(after.filter((f: any) => f.catch_up)).toHaveLength(1);
    expect(after.find((f: any) => f.catch_up).scheduled_time).toBe('2026-11-01T04:00:00.000Z');
    // 01:00 EDT (05:00Z) ran; 01:00 EST (06:00Z) repeats that wall-clock hour and does not run again.
    expect((await get('hourly-ny')).next_fire_time).toBe('2026-11-01T07:00:00.000Z');
    const half = await history(d, d.token, d.projectId, 'half-two-ny');
    expect(half.filter((f: any) => f.catch_up).map((f: any) => f.scheduled_time)).toEqual(['2026-10-31T06:30:00.000Z']);
    // 01:30 EDT (05:30Z) fires; 01:30 EST (06:30Z) does not: the next run is the day after.
    const one = await until(() => history(d, d.token, d.projectId, 'half-one-ny'), (f) => f.length >= 1, 20_000);
    expect(scheduled(one)).toEqual(['2026-11-01T05:30:00.000Z']);
    expect((await get('half-one-ny')).next_fire_time).toBe('2026-11-02T06:30:00.000Z');
  });
});
