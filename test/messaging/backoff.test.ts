import { describe, expect, it } from 'vitest';
import { backoffMs } from '../../src/daemon/services/messaging/dead-letter.js';
import { messagingConfig } from '../../src/daemon/services/messaging/config.js';

describe('push retry backoff (spec 3 §6, §8)', () => {
  it('with the default settings: 1 s after the first failure, doubling, capped at 60 s', () => {
    const { pushBackoffBaseMs, pushBackoffMaxMs } = messagingConfig({});
    const schedule = Array.from({ length: 9 }, (_, i) => backoffMs(i + 1, pushBackoffBaseMs, pushBackoffMaxMs));
    expect(schedule).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000, 60_000]);
  });

  it('the environment shortens it for tests', () => {
    const c = messagingConfig({ PLATFORM_PUBSUB_PUSH_BACKOFF_BASE_MS: '10', PLATFORM_PUBSUB_PUSH_BACKOFF_MAX_MS: '35' });
    expect([1, 2, 3, 4].map((n) => backoffMs(n, c.pushBackoffBaseMs, c.pushBackoffMaxMs))).toEqual([10, 20, 35, 35]);
  });
});
