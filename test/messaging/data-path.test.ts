import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { cast } from '../helpers/fixtures.js';
import { ManualClock } from '../../src/daemon/clock.js';
import { messagingConfig } from '../../src/daemon/services/messaging/config.js';
import { ack, makeSub, makeTopic, publish, pull, subPath, text, topicPath } from './helpers.js';

const err = (r: { status: number; body: any }, status: number, message?: RegExp) => {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  if (message) expect(r.body.error).toMatch(message);
};
const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('publish, pull, acknowledge (spec 3 §4.3)', () => {
  let d: TestDaemon;
  let c: Awaited<ReturnType<typeof cast>>;
  let p: string;
  beforeAll(async () => {
    d = await startTestDaemon();
    c = await cast(d);
    p = c.project.id;
    await makeTopic(d, c.admin.token, p, 't');
    await makeSub(d, c.admin.token, p, 't', 'a');
  });
  afterAll(() => d.close());
  const drain = async (sub: string, topic = 't') => {
    for (;;) {
      const r = await pull(d, c.member.token, p, topic, sub, { max_messages: 100, auto_ack: true });
      if (!r.body.messages.length) return;
    }
  };

  it('publish returns <ledger>:<entry> ids in request order; text, data, neither, attributes and key round-trip', async () => {
    const r = await publish(d, c.member.token, p, 't', [
      { text: 'héllo', attributes: { kind: 'greeting', 'Mixed Case': 'v' }, key: 'k1' },
      { data: b64('\x00\x01binary') },
      {},
    ]);
    expect(r.status).toBe(200);
    expect(r.body.message_ids).toHaveLength(3);
    const [l0, e0] = r.body.message_ids[0].split(':').map(Number);
    expect(r.body.message_ids).toEqual([`${l0}:${e0}`, `${l0}:${e0 + 1}`, `${l0}:${e0 + 2}`]);
    const got = await pull(d, c.member.token, p, 't', 'a', { max_messages: 10 });
    expect(got.status).toBe(200);
    expect(got.body.messages.map((m: any) => m.id)).toEqual(r.body.message_ids);
    const [m1, m2, m3] = got.body.messages;
    expect(m1).toEqual({
      ack_id: expect.any(String),
      id: r.body.message_ids[0],
      data: b64('héllo'),
      attributes: { kind: 'greeting', 'Mixed Case': 'v' },
      key: 'k1',
      publish_time: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
      delivery_attempt: 1,
    });
    expect(Buffer.from(m2.data, 'base64').toString('latin1')).toBe('\x00\x01binary');
    expect(m3).toMatchObject({ data: '', attributes: {} });
    expect(m3).not.toHaveProperty('key');
    const a = await ack(d, c.member.token, p, 't', 'a', got.body.messages.map((m: any) => m.ack_id));
    expect(a.body).toEqual({ acknowledged: 3 });
  });

  it('publish validation errors', async () => {
    const bad = async (body: unknown, re: RegExp) => err(await d.api('POST', `${topicPath(p, 't')}:publish`, { token: c.member.token, body }), 400, re);
    await bad({}, /messages/);
    await bad({ messages: [] }, /no messages/);
    await bad({ messages: Array.from({ length: 101 }, () => ({ text: 'x' })) }, /more than 100 messages/);
    await bad({ messages: [{ text: 'a', data: b64('b') }] }, /set either text or data, not both/);
    await bad({ messages: [{ data: 'not base64!' }] }, /data is not valid base64/);
    await bad({ messages: [{ text: 'a', attributes: { '': 'x' } }] }, /bad attribute name/);
    await bad({ messages: [{ text: 'a', attributes: { 'two\nlines': 'x' } }] }, /bad attribute name/);
    await bad({ messages: [{ text: 'a', priority: 1 }] }, /unknown body field: messages.0.priority/);
    // Both present but one empty is legal ("both empty is legal").
    expect((await publish(d, c.member.token, p, 't', [{ text: '', data: '' }])).status).toBe(200);
    err(await publish(d, c.member.token, p, 'absent', [{ text: 'x' }]), 404);
    await drain('a');
  });

  it('the publish body is capped at 4 MiB; up to that is accepted', async () => {
    const big = 'x'.repeat(3 * 1024 * 1024);
    expect((await publish(d, c.member.token, p, 't', [{ text: big }])).status).toBe(200);
    const over = await publish(d, c.member.token, p, 't', [{ text: big }, { text: 'y'.repeat(1024 * 1024 + 1) }]);
    err(over, 413, /exceeds 4194304 bytes/);
    await drain('a');
  });

  it('a long poll returns as soon as a message is published, well before its timeout', async () => {
    const started = Date.now();
    const waiting = pull(d, c.member.token, p, 't', 'a', { timeout_ms: 10_000 });
    await new Promise((r) => setTimeout(r, 150));
    await publish(d, c.member.token, p, 't', [{ text: 'wake up' }]);
    const r = await waiting;
    const elapsed = Date.now() - started;
    expect(r.body.messages.map(text)).toEqual(['wake up']);
    expect(elapsed).toBeGreaterThanOrEqual(150);
    expect(elapsed).toBeLessThan(3_000);
    await ack(d, c.member.token, p, 't', 'a', [r.body.messages[0].ack_id]);
  });

  it('a long poll is woken when a lease expires: the redelivery returns at the deadline, not at timeout_ms', async () => {
    await makeTopic(d, c.admin.token, p, 'lease');
    await makeSub(d, c.admin.token, p, 'lease', 'l', { ack_deadline_seconds: 1 });
    await publish(d, c.member.token, p, 'lease', [{ text: 'again' }]);
    const first = await pull(d, c.member.token, p, 'lease', 'l');
    expect(first.body.messages).toMatchObject([{ delivery_attempt: 1 }]);
    const started = Date.now();
    const r = await pull(d, c.member.token, p, 'lease', 'l', { timeout_ms: 10_000 });
    const elapsed = Date.now() - started;
    expect(r.body.messages).toMatchObject([{ id: first.body.messages[0].id, delivery_attempt: 2 }]);
    expect(elapsed).toBeGreaterThanOrEqual(800);
    expect(elapsed).toBeLessThan(3_000);
    await ack(d, c.member.token, p, 'lease', 'l', [r.body.messages[0].ack_id]);
  });

  it('one publish wakes every waiting long poll of every subscription at once', async () => {
    await makeTopic(d, c.admin.token, p, 'fan');
    for (const s of ['x', 'y', 'z']) await makeSub(d, c.admin.token, p, 'fan', s);
    const started = Date.now();
    const waiting = ['x', 'y', 'z'].map((s) => pull(d, c.member.token, p, 'fan', s, { timeout_ms: 10_000 }));
    await new Promise((r) => setTimeout(r, 100));
    await publish(d, c.member.token, p, 'fan', [{ text: 'to all' }]);
    const got = await Promise.all(waiting);
    expect(got.map((r) => r.body.messages.map(text))).toEqual([['to all'], ['to all'], ['to all']]);
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('shared: a publish wakes one idle long poll, not all; a batch larger than its max_messages wakes the next', async () => {
    await makeTopic(d, c.admin.token, p, 'herd');
    await makeSub(d, c.admin.token, p, 'herd', 'h');
    const settled: Array<{ body: any } | undefined> = [undefined, undefined, undefined];
    const waiting = [0, 1, 2].map((i) =>
      pull(d, c.member.token, p, 'herd', 'h', { max_messages: 1, timeout_ms: 5_000 }, { 'x-consumer-id': `c${i}` }).then((r) => (settled[i] = r)),
    );
    await new Promise((r) => setTimeout(r, 150));
    const started = Date.now();
    await publish(d, c.member.token, p, 'herd', [{ text: 'one' }]);
    await Promise.race(waiting);
    await new Promise((r) => setTimeout(r, 150));
    // Exactly one pull was woken, with the message; the other two still wait.
    const done = settled.filter((r) => r !== undefined);
    expect(done.map((r) => r!.body.messages.map(text))).toEqual([['one']]);
    // Two more messages in one publish: the woken pull takes its one (a full batch) and passes the
    // wake-up on, so both remaining pulls return at once, not at their timeout.
    await publish(d, c.member.token, p, 'herd', [{ text: 'two' }, { text: 'three' }]);
    await Promise.all(waiting);
    expect(Date.now() - started).toBeLessThan(2_500);
    expect(settled.flatMap((r) => r!.body.messages.map(text)).sort()).toEqual(['one', 'three', 'two']);
    await drain('h', 'herd');
  });

  it('an empty long poll waits timeout_ms and returns no messages', async () => {
    const started = Date.now();
    const r = await pull(d, c.member.token, p, 't', 'a', { timeout_ms: 300 });
    expect(r.body).toEqual({ messages: [] });
    expect(Date.now() - started).toBeGreaterThanOrEqual(280);
  });

  it('max_messages is silently capped at 100 and timeout_ms at 20000', async () => {
    for (let i = 0; i < 2; i++) await publish(d, c.member.token, p, 't', Array.from({ length: 75 }, (_, j) => ({ text: `m${i}-${j}` })));
    const r = await pull(d, c.member.token, p, 't', 'a', { max_messages: 1000, timeout_ms: 999_999 });
    expect(r.status).toBe(200);
    expect(r.body.messages).toHaveLength(100);
    const rest = await pull(d, c.member.token, p, 't', 'a', { max_messages: 1000 });
    expect(rest.body.messages).toHaveLength(50);
    const ids = [...r.body.messages, ...rest.body.messages].map((m: any) => m.ack_id);
    expect((await ack(d, c.member.token, p, 't', 'a', ids)).body).toEqual({ acknowledged: 150 });
    const def = await pull(d, c.member.token, p, 't', 'a');
    expect(def.body.messages).toHaveLength(0);
    err(await pull(d, c.member.token, p, 't', 'a', { max_messages: 0 }), 400);
    err(await pull(d, c.member.token, p, 't', 'a', { timeout_ms: -1 }), 400);
    err(await pull(d, c.member.token, p, 't', 'a', { wait: true }), 400, /unknown body field: wait/);
  });

  it('pull defaults to 10 messages; auto_ack omits ack ids and reports acknowledged', async () => {
    await drain('a');
    await publish(d, c.member.token, p, 't', Array.from({ length: 12 }, (_, j) => ({ text: `n${j}` })));
    const r = await pull(d, c.member.token, p, 't', 'a', { auto_ack: true });
    expect(r.status).toBe(200);
    expect(r.body.messages).toHaveLength(10);
    expect(r.body.acknowledged).toBe(10);
    for (const m of r.body.messages) expect(m).not.toHaveProperty('ack_id');
    const sub = await d.api('GET', subPath(p, 't', 'a'), { token: c.member.token });
    expect(sub.body.stats).toMatchObject({ backlog: 2, unacknowledged: 0 });
    await drain('a');
  });

  it('acknowledge: alias :ack, 1 to 1000 ids, 400 for ids of another subscription, repeat acks count 0', async () => {
    await makeSub(d, c.admin.token, p, 't', 'b', { start_from: 'new' });
    await publish(d, c.member.token, p, 't', [{ text: 'one' }]);
    const fromA = (await pull(d, c.member.token, p, 't', 'a')).body.messages[0];
    const fromB = (await pull(d, c.member.token, p, 't', 'b')).body.messages[0];
    err(await ack(d, c.member.token, p, 't', 'a', []), 400, /ack_ids is empty/);
    err(await ack(d, c.member.token, p, 't', 'a', Array.from({ length: 1001 }, () => fromA.ack_id)), 400, /more than 1000/);
    err(await ack(d, c.member.token, p, 't', 'a', [fromB.ack_id]), 400, /ack_ids invalid for this subscription/);
    err(await ack(d, c.member.token, p, 't', 'a', ['garbage!']), 400, /ack_ids invalid for this subscription/);
    err(await ack(d, c.member.token, p, 't', 'a', [fromA.ack_id, fromB.ack_id]), 400, /invalid for this subscription/);
    const viaAlias = await d.api('POST', `${subPath(p, 't', 'a')}:ack`, { token: c.member.token, body: { ack_ids: [fromA.ack_id] } });
    expect(viaAlias.body).toEqual({ acknowledged: 1 });
    expect((await ack(d, c.member.token, p, 't', 'a', [fromA.ack_id])).body).toEqual({ acknowledged: 0 });
    expect((await ack(d, c.member.token, p, 't', 'b', [fromB.ack_id])).body).toEqual({ acknowledged: 1 });
  });

  it('a message is retained only while some subscription owes an acknowledgement', async () => {
    await drain('a');
    await drain('b');
    const storage = async () => (await d.api('GET', topicPath(p, 't'), { token: c.member.token })).body.stats.storage_bytes;
    await publish(d, c.member.token, p, 't', [{ text: '12345' }]);
    expect(await storage()).toBe(5);
    await drain('a');
    expect(await storage()).toBe(5); // b still owes it
    await drain('b');
    expect(await storage()).toBe(0);
    // No subscription at all: accepted, counted, reclaimed at once.
    await makeTopic(d, c.admin.token, p, 'lonely');
    const r = await publish(d, c.member.token, p, 'lonely', [{ text: 'nobody listens' }]);
    expect(r.status).toBe(200);
    const t = (await d.api('GET', topicPath(p, 'lonely'), { token: c.member.token })).body;
    expect(t.stats).toMatchObject({ published: 1, published_bytes: 14, storage_bytes: 0, backlog_bytes: 0 });
    // A subscription created later with start_from all sees nothing: the message was reclaimed.
    await makeSub(d, c.admin.token, p, 'lonely', 'late');
    expect((await pull(d, c.member.token, p, 'lonely', 'late')).body.messages).toEqual([]);
  });

  it('deleting a subscription reclaims what only it owed', async () => {
    await makeTopic(d, c.admin.token, p, 'reclaim');
    await makeSub(d, c.admin.token, p, 'reclaim', 'only');
    await publish(d, c.member.token, p, 'reclaim', [{ text: 'abc' }]);
    expect((await d.api('GET', topicPath(p, 'reclaim'), { token: c.member.token })).body.stats.storage_bytes).toBe(3);
    await d.api('DELETE', subPath(p, 'reclaim', 'only'), { token: c.admin.token });
    let bytes = 3;
    for (let i = 0; i < 100 && bytes; i++) {
      await new Promise((r) => setTimeout(r, 5));
      bytes = (await d.api('GET', topicPath(p, 'reclaim'), { token: c.member.token })).body.stats.storage_bytes;
    }
    expect(bytes).toBe(0);
  });

  it('start_from all receives what the topic still retains; start_from new only later messages', async () => {
    await makeTopic(d, c.admin.token, p, 'history');
    await makeSub(d, c.admin.token, p, 'history', 'keeper');
    await publish(d, c.member.token, p, 'history', [{ text: 'old-1' }, { text: 'old-2' }]);
    await makeSub(d, c.admin.token, p, 'history', 'from-all', { start_from: 'all' });
    await makeSub(d, c.admin.token, p, 'history', 'from-new', { start_from: 'new' });
    await publish(d, c.member.token, p, 'history', [{ text: 'new-1' }]);
    const all = await pull(d, c.member.token, p, 'history', 'from-all');
    expect(all.body.messages.map(text)).toEqual(['old-1', 'old-2', 'new-1']);
    const fresh = await pull(d, c.member.token, p, 'history', 'from-new');
    expect(fresh.body.messages.map(text)).toEqual(['new-1']);
  });

  it('max_ack_pending bounds the messages in flight', async () => {
    await makeTopic(d, c.admin.token, p, 'bounded');
    await makeSub(d, c.admin.token, p, 'bounded', 's', { max_ack_pending: 3 });
    await publish(d, c.member.token, p, 'bounded', Array.from({ length: 5 }, (_, i) => ({ text: `b${i}` })));
    const first = await pull(d, c.member.token, p, 'bounded', 's', { max_messages: 10 });
    expect(first.body.messages.map(text)).toEqual(['b0', 'b1', 'b2']);
    expect((await pull(d, c.member.token, p, 'bounded', 's', { max_messages: 10 })).body.messages).toEqual([]);
    // An acknowledgement opens room and wakes a waiting long poll.
    const waiting = pull(d, c.member.token, p, 'bounded', 's', { max_messages: 10, timeout_ms: 10_000 });
    await new Promise((r) => setTimeout(r, 100));
    await ack(d, c.member.token, p, 'bounded', 's', [first.body.messages[0].ack_id]);
    const next = await waiting;
    expect(next.body.messages.map(text)).toEqual(['b3']);
    const s = await d.api('GET', subPath(p, 'bounded', 's'), { token: c.member.token });
    expect(s.body.stats).toMatchObject({ backlog: 4, unacknowledged: 3 });
  });

  it('stats: topic counters, producers, consumers and active_type once something connects', async () => {
    const t = (await d.api('GET', topicPath(p, 'bounded'), { token: c.member.token })).body;
    expect(t.stats).toMatchObject({ published: 5, delivered: 4, published_bytes: 10, delivered_bytes: 8, storage_bytes: 8, subscriptions: 1, producers: 1 });
    const s = (await d.api('GET', subPath(p, 'bounded', 's'), { token: c.member.token })).body;
    expect(s).toMatchObject({ active_type: 'shared' });
    expect(s.stats).toMatchObject({ delivered: 4, consumers: 1 });
  });

  it('discard new refuses what does not fit: 207 on a partial batch, 409 when nothing fits', async () => {
    await makeTopic(d, c.admin.token, p, 'small-new', { max_bytes: '10', discard: 'new' });
    await makeSub(d, c.admin.token, p, 'small-new', 's');
    const r = await publish(d, c.member.token, p, 'small-new', [{ text: 'aaaa' }, { text: 'bbbb' }, { text: 'cccc' }]);
    expect(r.status).toBe(207);
    expect(r.body).toEqual({ message_ids: [expect.any(String), expect.any(String)], error: expect.stringMatching(/full.*discard new/), published: 2, requested: 3 });
    err(await publish(d, c.member.token, p, 'small-new', [{ text: 'dddd' }]), 409, /topic small-new is full/);
    const got = await pull(d, c.member.token, p, 'small-new', 's', { auto_ack: true });
    expect(got.body.messages.map(text)).toEqual(['aaaa', 'bbbb']);
    expect((await publish(d, c.member.token, p, 'small-new', [{ text: 'eeee' }])).status).toBe(200);
  });

  it('discard old drops the oldest messages to make room', async () => {
    await makeTopic(d, c.admin.token, p, 'small-old', { max_bytes: '10', discard: 'old' });
    await makeSub(d, c.admin.token, p, 'small-old', 's');
    for (const t of ['1111', '2222', '3333', '4444']) expect((await publish(d, c.member.token, p, 'small-old', [{ text: t }])).status).toBe(200);
    const topic = (await d.api('GET', topicPath(p, 'small-old'), { token: c.member.token })).body;
    expect(topic.stats.storage_bytes).toBe(8);
    const got = await pull(d, c.member.token, p, 'small-old', 's', { auto_ack: true });
    expect(got.body.messages.map(text)).toEqual(['3333', '4444']);
    // A message larger than max_bytes can never fit.
    err(await publish(d, c.member.token, p, 'small-old', [{ text: 'x'.repeat(11) }]), 409, /larger than the topic's max_bytes/);
  });
});

describe('deadlines, key-shared, failover and max_age (manual clock)', () => {
  const clock = new ManualClock(Date.parse('2026-01-01T00:00:00Z'));
  let d: TestDaemon;
  let c: Awaited<ReturnType<typeof cast>>;
  let p: string;
  beforeAll(async () => {
    d = await startTestDaemon({ messaging: { ...messagingConfig({}), retentionSweepMs: 20, consumerTtlMs: 30_000 } }, { clock });
    c = await cast(d);
    p = c.project.id;
  });
  afterAll(() => d.close());

  it('an unacknowledged message comes back after the ack deadline with a rising delivery_attempt', async () => {
    await makeTopic(d, c.admin.token, p, 'work');
    await makeSub(d, c.admin.token, p, 'work', 'w', { ack_deadline_seconds: 10 });
    const [id] = (await publish(d, c.member.token, p, 'work', [{ text: 'job' }])).body.message_ids;
    const first = await pull(d, c.member.token, p, 'work', 'w');
    expect(first.body.messages).toMatchObject([{ id, delivery_attempt: 1 }]);
    expect((await pull(d, c.member.token, p, 'work', 'w')).body.messages).toEqual([]);
    clock.advance(9_000);
    expect((await pull(d, c.member.token, p, 'work', 'w')).body.messages).toEqual([]);
    clock.advance(1_001);
    const second = await pull(d, c.member.token, p, 'work', 'w');
    expect(second.body.messages).toMatchObject([{ id, delivery_attempt: 2 }]);
    clock.advance(10_001);
    const third = await pull(d, c.member.token, p, 'work', 'w');
    expect(third.body.messages).toMatchObject([{ id, delivery_attempt: 3 }]);
    const s = (await d.api('GET', subPath(p, 'work', 'w'), { token: c.member.token })).body;
    expect(s.stats).toMatchObject({ backlog: 1, unacknowledged: 1 });
    expect(s.stats.redeliver_rate).toBeGreaterThan(0);
    // An ack id of an earlier attempt still acknowledges (at-least-once; acks are idempotent).
    expect((await ack(d, c.member.token, p, 'work', 'w', [first.body.messages[0].ack_id])).body).toEqual({ acknowledged: 1 });
    clock.advance(60_000);
    expect((await pull(d, c.member.token, p, 'work', 'w')).body.messages).toEqual([]);
  });

  it('key-shared: each ordering key goes to one consumer among several concurrent pullers', async () => {
    await makeTopic(d, c.admin.token, p, 'keyed');
    await makeSub(d, c.admin.token, p, 'keyed', 'ks', { type: 'key-shared' });
    const consumers = ['c1', 'c2', 'c3'];
    const seen = new Map<string, Set<string>>();
    const perConsumer = new Map<string, number>();
    let total = 0;
    const loop = async (name: string) => {
      while (total < 60) {
        const r = await pull(d, c.member.token, p, 'keyed', 'ks', { max_messages: 7, timeout_ms: 300 }, { 'x-consumer-id': name });
        for (const m of r.body.messages) {
          if (!seen.has(m.key)) seen.set(m.key, new Set());
          seen.get(m.key)!.add(name);
          perConsumer.set(name, (perConsumer.get(name) ?? 0) + 1);
        }
        total += r.body.messages.length;
        if (r.body.messages.length) await ack(d, c.member.token, p, 'keyed', 'ks', r.body.messages.map((m: any) => m.ack_id));
      }
    };
    const loops = consumers.map(loop);
    await new Promise((r) => setTimeout(r, 100));
    const keys = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet'];
    for (let batch = 0; batch < 6; batch++) {
      await publish(d, c.member.token, p, 'keyed', keys.map((k) => ({ text: `${k}-${batch}`, key: k })));
    }
    await Promise.all(loops);
    expect(total).toBe(60);
    expect([...seen.keys()].sort()).toEqual([...keys].sort());
    for (const [key, who] of seen) expect(who.size, `key ${key} went to ${[...who]}`).toBe(1);
    // Keys spread over more than one consumer.
    expect(new Set([...seen.values()].map((s) => [...s][0])).size).toBeGreaterThan(1);
    const s = (await d.api('GET', subPath(p, 'keyed', 'ks'), { token: c.member.token })).body;
    expect(s).toMatchObject({ active_type: 'key-shared' });
    expect(s.stats.consumers).toBe(3);
  });

  it('failover: only the active consumer is served; a standby takes over when the active one goes away', async () => {
    await makeTopic(d, c.admin.token, p, 'fo');
    await makeSub(d, c.admin.token, p, 'fo', 'f', { type: 'failover', ack_deadline_seconds: 600 });
    const as = (name: string, body: Record<string, unknown> = {}) => pull(d, c.member.token, p, 'fo', 'f', body, { 'x-consumer-id': name });
    expect((await as('primary')).body.messages).toEqual([]); // connects first: active
    await publish(d, c.member.token, p, 'fo', [{ text: 'f1' }, { text: 'f2' }]);
    expect((await as('standby', { timeout_ms: 100 })).body.messages).toEqual([]);
    const got = await as('primary', { max_messages: 1 });
    expect(got.body.messages.map(text)).toEqual(['f1']);
    expect((await as('standby')).body.messages).toEqual([]);
    // The primary stops pulling; once it counts as gone the standby becomes active and gets
    // everything, including what the primary held unacknowledged (Pulsar redelivers on disconnect).
    clock.advance(20_000);
    await as('standby'); // keeps the standby connected
    clock.advance(15_000);
    const takeover = await as('standby', { max_messages: 10 });
    expect(takeover.body.messages.map(text)).toEqual(['f1', 'f2']);
    expect(takeover.body.messages[0].delivery_attempt).toBe(2);
  });

  it('max_age: the retention sweep expires old messages for every subscription', async () => {
    await makeTopic(d, c.admin.token, p, 'aging', { max_age: '1m' });
    await makeSub(d, c.admin.token, p, 'aging', 's1');
    await makeSub(d, c.admin.token, p, 'aging', 's2');
    await publish(d, c.member.token, p, 'aging', [{ text: 'stale' }]);
    clock.advance(30_000);
    await publish(d, c.member.token, p, 'aging', [{ text: 'fresh' }]);
    clock.advance(31_000);
    let storage = -1;
    for (let i = 0; i < 200 && storage !== 5; i++) {
      await new Promise((r) => setTimeout(r, 10));
      storage = (await d.api('GET', topicPath(p, 'aging'), { token: c.member.token })).body.stats.storage_bytes;
    }
    expect(storage).toBe(5);
    expect((await pull(d, c.member.token, p, 'aging', 's1')).body.messages.map(text)).toEqual(['fresh']);
    expect((await pull(d, c.member.token, p, 'aging', 's2')).body.messages.map(text)).toEqual(['fresh']);
  });
});
