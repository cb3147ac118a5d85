import { describe, expect, it } from 'vitest';
import { parseDurationMs, parseSince } from '../../src/cli/durations.js';

const NOW = Date.parse('2026-11-27T12:00:00.000Z');

describe('--since values', () => {
  it('reads durations in s, m, h and d, compound and fractional', () => {
    expect(parseDurationMs('30s')).toBe(30_000);
    expect(parseDurationMs('5m')).toBe(300_000);
    expect(parseDurationMs('1h')).toBe(3_600_000);
    expect(parseDurationMs('2d')).toBe(172_800_000);
    expect(parseDurationMs('1h30m')).toBe(5_400_000);
    expect(parseDurationMs('1.5h')).toBe(5_400_000);
    expect(parseDurationMs(' 5m ')).toBe(300_000);
  });

  it('refuses what is not a duration, and zero', () => {
    for (const bad of ['', '5', 'm', '5x', '5 m', '-5m', '5M', '1w', 'h1', '0s', '0m0s', '5m-']) expect(parseDurationMs(bad), bad).toBeUndefined();
  });

  it('turns a duration into the instant that far before now', () => {
    expect(parseSince('5m', NOW)!.toISOString()).toBe('2026-11-27T11:55:00.000Z');
    expect(parseSince('2d', NOW)!.toISOString()).toBe('2026-11-25T12:00:00.000Z');
  });

  it('reads RFC 3339 times with Z or an offset, with or without fractions', () => {
    expect(parseSince('2026-01-02T15:04:05Z', NOW)!.toISOString()).toBe('2026-01-02T15:04:05.000Z');
    expect(parseSince('2026-01-02T15:04:05.123456Z', NOW)!.toISOString()).toBe('2026-01-02T15:04:05.123Z');
    expect(parseSince('2026-01-02T15:04:05+02:00', NOW)!.toISOString()).toBe('2026-01-02T13:04:05.000Z');
    expect(parseSince('2026-01-02t15:04:05z', NOW)!.toISOString()).toBe('2026-01-02T15:04:05.000Z');
    // The offset may move the instant to the previous day; the date is still checked in its own offset.
    expect(parseSince('2026-03-01T01:00:00+05:00', NOW)!.toISOString()).toBe('2026-02-28T20:00:00.000Z');
  });

  it('refuses times without an offset, impossible dates and other words', () => {
    for (const bad of ['2026-01-02', '2026-01-02T15:04:05', '2026-02-30T00:00:00Z', '2026-13-01T00:00:00Z', '2026-01-02T25:00:00Z', 'yesterday', 'now'])
      expect(parseSince(bad, NOW), bad).toBeUndefined();
  });
});
