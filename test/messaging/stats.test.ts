import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { cast } from '../helpers/fixtures.js';
import { ack, makeSub, makeTopic, publish, pull, subPath, text, topicPath } from './helpers.js';

/**
 * Every stats counter of spec 3 §2.3 and §2.4 and the usage view, with exact values, across a
 * daemon restart: counters are "cumulative since a broker last loaded the topic and reset on
 * broker restart", while storage and backlog are live from the durable store.
 */
const home = mkdtempSync(join(tmpdir(), 'platform-msg-stats-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));

describe('stats counters and usage (spec 3 §2.3, §2.4, §4.3)', () => {
  it('count publishes, deliveries, bytes, backlog and consumers exactly; restart resets counters, not storage', async () => {
    let d: TestDaemon = await startTestDaemon({}, { home });
    const c = await cast(d);
    const p = c.project.id;
    const topic = async () => (await d.api('GET', topicPath(p, 'metrics'), { token: c.member.token })).body;
    const sub = async (s: string) => (await d.api('GET', subPath(p, 'metrics', s), { token: c.member.token })).body;
    const usage = async () => (await d.api('GET', `/v1/projects/${p}/pubsub/usage`, { token: c.member.token })).body;
    try {
      await makeTopic(d, c.admin.token, p, 'metrics');
      await makeSub(d, c.admin.token, p, 'metrics', 'a');
      await makeSub(d, c.admin.token, p, 'metrics', 'b');
      // Sizes: payload + key + attribute names and values: 4, 2 + 1 + 1, 1 + 2.
      const ids = (await publish(d, c.member.token, p, 'metrics', [{ text: 'aaaa' }, { text: 'bb', attributes: { k: 'v' } }, { text: 'c', key: 'kk' }])).body
        .message_ids as string[];
      expect(ids).toHaveLength(3);
      expect((await topic()).stats).toEqual({
        published: 3,
        delivered: 0,
        published_bytes: 11,
        delivered_bytes: 0,
        storage_bytes: 11,
        backlog_bytes: 22, // owed to two subscriptions
        subscriptions: 2,
        producers: 1,
      });
      const waiting = (await sub('a')).stats;
      expect(waiting).toEqual({ backlog: 3, unacknowledged: 0, delivered: 0, consumers: 0, redeliver_rate: 0, oldest_unacked_age_seconds: expect.any(Number) });
      // Just published: the oldest waiting message is seconds old at most (a loaded machine gets room).
      expect(waiting.oldest_unacked_age_seconds).toBeGreaterThanOrEqual(0);
      expect(waiting.oldest_unacked_age_seconds).toBeLessThan(30);
      expect((await sub('a')).active_type).toBeUndefined();

      const got = await pull(d, c.member.token, p, 'metrics', 'a', { max_messages: 2 });
      expect(got.body.messages.map(text)).toEqual(['aaaa', 'bb']);
      await ack(d, c.member.token, p, 'metrics', 'a', [got.body.messages[0].ack_id]);
      expect(await sub('a')).toMatchObject({ active_type: 'shared', stats: { backlog: 2, unacknowledged: 1, delivered: 2, consumers: 1, redeliver_rate: 0 } });
      expect((await topic()).stats).toMatchObject({ delivered: 2, delivered_bytes: 8, storage_bytes: 11, backlog_bytes: 18 });

      // b takes everything with auto_ack: 'aaaa' is then owed by nobody and reclaimed.
      const all = await pull(d, c.sa.token, p, 'metrics', 'b', { max_messages: 10, auto_ack: true });
      expect(all.body).toMatchObject({ acknowledged: 3 });
      expect((await topic()).stats).toEqual({
        published: 3,
        delivered: 5,
        published_bytes: 11,
        delivered_bytes: 19,
        storage_bytes: 7,
        backlog_bytes: 7,
        subscriptions: 2,
        producers: 1,
      });
      expect((await sub('b')).stats).toEqual({ backlog: 0, unacknowledged: 0, delivered: 3, consumers: 1, redeliver_rate: 0 });
      const u = await usage();
      expect(u.topics).toEqual([{ name: 'metrics', published: 3, delivered: 5, published_bytes: 11, delivered_bytes: 19, storage_bytes: 7, backlog_bytes: 7, subscriptions: 2 }]);
      expect(u.totals).toEqual({ name: 'total', published: 3, delivered: 5, published_bytes: 11, delivered_bytes: 19, storage_bytes: 7, backlog_bytes: 7, subscriptions: 2 });
      const quota = (await d.api('GET', `/v1/projects/${p}/pubsub/quota`, { token: c.member.token })).body;
      expect(quota).toMatchObject({ allocated_bytes: 16 * 1024 * 1024, storage_bytes: 7, backlog_bytes: 7, topics: 1, provisioned: true });
    } finally {
      await d.close();
    }

    // Restart on the same state: counters start again from zero; storage, backlog and attempts are durable.
    d = await startTestDaemon({}, { home });
    try {
      expect((await topic()).stats).toEqual({
        published: 0,
        delivered: 0,
        published_bytes: 0,
        delivered_bytes: 0,
        storage_bytes: 7,
        backlog_bytes: 7,
        subscriptions: 2,
        producers: 0,
      });
      // The lease of 'bb' ended with the broker: it is backlog again, not unacknowledged.
      expect(await sub('a')).toMatchObject({ stats: { backlog: 2, unacknowledged: 0, delivered: 0, consumers: 0, redeliver_rate: 0 } });
      expect((await sub('a')).active_type).toBeUndefined();
      const again = await pull(d, c.member.token, p, 'metrics', 'a', { max_messages: 10 });
      expect(again.body.messages.map((m: any) => [text(m), m.delivery_attempt])).toEqual([
        ['bb', 2],
        ['c', 1],
      ]);
      const s = await sub('a');
      expect(s.stats).toMatchObject({ backlog: 2, unacknowledged: 2, delivered: 2, consumers: 1 });
      expect(s.stats.redeliver_rate).toBeCloseTo(1 / 60, 3); // one redelivery in the last minute
      expect((await usage()).totals).toMatchObject({ published: 0, delivered: 2, delivered_bytes: 7, storage_bytes: 7, backlog_bytes: 7 });
    } finally {
      await d.close();
    }
  });
});
