import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HTTP, type CloudEvent } from 'cloudevents';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { cast } from '../helpers/fixtures.js';
import { messagingConfig } from '../../src/daemon/services/messaging/config.js';
import { makeSub, makeTopic, publish, pull, subPath, text, topicPath } from './helpers.js';

/** The push request deadline: long enough that a loaded machine does not turn answers into retries. */
const PUSH_TIMEOUT = 1_500;

interface Seen {
  path: string;
  headers: Record<string, string>;
  body: Buffer;
  at: number;
}

/** A real receiver on 127.0.0.1: each path has its own behaviour; every request is recorded. */
function receiver() {
  const seen: Seen[] = [];
  const counts = new Map<string, number>();
  const inflight = new Map<string, number>();
  const maxInflight = new Map<string, number>();
  const endlessClosed: number[] = [];
  const server: Server = createServer(async (req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const path = req.url ?? '/';
    const n = (counts.get(path) ?? 0) + 1;
    counts.set(path, n);
    seen.push({ path, headers: req.headers as Record<string, string>, body: Buffer.concat(chunks), at: Date.now() });
    if (path.startsWith('/ok')) return res.writeHead(204).end();
    if (path.startsWith('/accepted')) return res.writeHead(202, { 'content-type': 'text/plain' }).end('queued');
    if (path.startsWith('/flaky')) return n <= 3 ? res.writeHead(503).end('busy') : res.writeHead(200).end('ok');
    if (path.startsWith('/slow-once')) {
      if (n === 1) return setTimeout(() => res.writeHead(204).end(), 3 * PUSH_TIMEOUT);
      return res.writeHead(204).end();
    }
    if (path.startsWith('/slowish')) {
      // Tracks how many deliveries of each key (and overall) are in flight at once.
      const key = `${path} ${req.headers['ce-subject'] ?? ''}`;
      for (const k of [key, path]) {
        inflight.set(k, (inflight.get(k) ?? 0) + 1);
        maxInflight.set(k, Math.max(maxInflight.get(k) ?? 0, inflight.get(k)!));
      }
      // In flight as the sender sees it: until the answer, or until the sender gives up (a
      // deadline passed on a loaded machine), which closes the connection and allows a retry.
      let open = true;
      const release = () => {
        if (!open) return;
        open = false;
        for (const k of [key, path]) inflight.set(k, inflight.get(k)! - 1);
      };
      res.on('close', release);
      return setTimeout(() => {
        release();
        if (!res.destroyed) res.writeHead(204).end();
      }, 15);
    }
    if (path.startsWith('/fail-first')) {
      // Every message fails its first attempt: later messages must not overtake it when ordered.
      const body = Buffer.concat(chunks).toString();
      const tries = (counts.get(`${path} ${body}`) ?? 0) + 1;
      counts.set(`${path} ${body}`, tries);
      return tries === 1 ? res.writeHead(503).end('not yet') : res.writeHead(204).end();
    }
    if (path.startsWith('/endless-error')) {
      // 128 KiB of body and never an end: only a reader that stops at 64 KiB sees the status in time.
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.write('x'.repeat(128 * 1024));
      res.on('close', () => endlessClosed.push(Date.now()));
      return;
    }
    if (path.startsWith('/redirect')) return res.writeHead(302, { location: '/ok-after-redirect' }).end();
    if (path.startsWith('/function-error')) return res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"handler raised ValueError"}');
    if (path.startsWith('/huge-error')) {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('e'.repeat(2 * 1024 * 1024));
      return;
    }
    res.writeHead(500).end('boom');
  });
  return {
    seen,
    maxInflight,
    endlessClosed,
    at: (path: string) => seen.filter((s) => s.path === path),
    async listen() {
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    },
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}

async function until<T>(fn: () => Promise<T> | T, ok: (v: T) => boolean, ms = 8_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** As a receiving server would call it: JSON and text bodies as strings, other payloads as bytes. */
const toEvent = (s: Seen) =>
  HTTP.toEvent({ headers: s.headers, body: /json|text/.test(s.headers['content-type'] ?? '') ? s.body.toString('utf8') : s.body }) as CloudEvent<any>;

describe('push delivery (spec 3 §6)', () => {
  const rx = receiver();
  let base: string;
  let d: TestDaemon;
  let c: Awaited<ReturnType<typeof cast>>;
  let p: string;
  const BACKOFF = 60;
  beforeAll(async () => {
    base = await rx.listen();
    d = await startTestDaemon({
      messaging: { ...messagingConfig({}), allowLoopbackPush: true, pushBackoffBaseMs: BACKOFF, pushBackoffMaxMs: 1_000, pushTimeoutMs: PUSH_TIMEOUT },
    });
    c = await cast(d);
    p = c.project.id;
    await makeTopic(d, c.admin.token, p, 'orders');
    await makeTopic(d, c.admin.token, p, 'dlq');
    await makeSub(d, c.admin.token, p, 'dlq', 'inspect');
  });
  afterAll(async () => {
    await d.close();
    await rx.close();
  });
  const backlog = async (sub: string) => (await d.api('GET', subPath(p, 'orders', sub), { token: c.member.token })).body.stats.backlog;

  it('binary mode: payload as body, exactly the ce-* headers of §6, a 2xx acknowledges', async () => {
    const s = await makeSub(d, c.admin.token, p, 'orders', 'bin', {
      start_from: 'new',
      deliver: { mode: 'push', push: { url: `${base}/ok/bin`, content_mode: 'cloudevents-binary' } },
    });
    expect(s.stats.consumers).toBe(1);
    expect(s.active_type).toBe('shared');
    const payload = { order: 42, items: ['a', 'b'] };
    const [id] = (
      await publish(d, c.member.token, p, 'orders', [{ text: JSON.stringify(payload), key: 'order-42', attributes: { datacontenttype: 'application/json', Region: 'eu west' } }])
    ).body.message_ids;
    const [hit] = await until(() => rx.at('/ok/bin'), (v) => v.length > 0);
    expect(hit).toBeDefined();
    const ce = Object.fromEntries(Object.entries(hit!.headers).filter(([k]) => k.startsWith('ce-')));
    expect(ce).toEqual({
      'ce-specversion': '1.0',
      'ce-type': 'ai.platform.pubsub.message.v1',
      'ce-id': id,
      'ce-source': `persistent://p-${c.project.short}/main/orders`,
      'ce-subject': 'order-42',
      'ce-time': expect.stringMatching(/Z$/),
      'ce-subscription': `projects/${c.project.short}/topics/orders/subscriptions/bin`,
      'ce-deliveryattempt': '1',
      'ce-attr-datacontenttype': 'application/json',
      'ce-attr-region': 'eu west',
    });
    expect(hit!.headers['content-type']).toBe('application/json');
    const event = toEvent(hit!);
    expect(event.type).toBe('ai.platform.pubsub.message.v1');
    expect(event.id).toBe(id);
    expect(event.data).toEqual(payload);
    expect((event as any).deliveryattempt).toBe('1');
    expect(await until(() => backlog('bin'), (n) => n === 0)).toBe(0);
  });

  it('structured mode: one JSON envelope with data, attributes and delivery attempt', async () => {
    await makeSub(d, c.admin.token, p, 'orders', 'env', { start_from: 'new', deliver: { mode: 'push', push: { url: `${base}/accepted/env` } } });
    const [id] = (await publish(d, c.member.token, p, 'orders', [{ data: Buffer.from([0, 1, 2, 255]).toString('base64'), attributes: { color: 'blue', 'Shelf Row': 'B' } }])).body.message_ids;
    const [hit] = await until(() => rx.at('/accepted/env'), (v) => v.length > 0);
    expect(hit!.headers['content-type']).toBe('application/cloudevents+json; charset=utf-8');
    expect(Object.keys(hit!.headers).filter((k) => k.startsWith('ce-'))).toEqual([]);
    const event = toEvent(hit!);
    expect(event).toMatchObject({ specversion: '1.0', type: 'ai.platform.pubsub.message.v1', id, subject: id, datacontenttype: 'application/octet-stream' });
    expect((event as any).subscription).toBe(`projects/${c.project.short}/topics/orders/subscriptions/env`);
    expect((event as any).deliveryattempt).toBe(1);
    expect((event as any)['attr-color']).toBe('blue');
    // CloudEvents attribute names are lowercase: the same name binary mode gives its header.
    expect((event as any)['attr-shelf%20row']).toBe('B');
    expect(Object.keys(JSON.parse(hit!.body.toString())).filter((k) => k !== k.toLowerCase())).toEqual([]);
    expect(Buffer.from(event.data as Uint32Array).equals(Buffer.from([0, 1, 2, 255]))).toBe(true);
    expect(await until(() => backlog('env'), (n) => n === 0)).toBe(0);
  });

  it('failures retry with exponential backoff until a 2xx, with a rising ce-deliveryattempt', async () => {
    await makeSub(d, c.admin.token, p, 'orders', 'flaky', { start_from: 'new', deliver: { mode: 'push', push: { url: `${base}/flaky`, content_mode: 'cloudevents-binary' } } });
    await publish(d, c.member.token, p, 'orders', [{ text: 'retry me' }]);
    const hits = await until(() => rx.at('/flaky'), (v) => v.length >= 4);
    expect(hits.map((h) => h.headers['ce-deliveryattempt'])).toEqual(['1', '2', '3', '4']);
    const gaps = hits.slice(1).map((h, i) => h.at - hits[i]!.at);
    // Backoff base, doubling: 60, 120, 240 ms (lower bounds; timers never fire early).
    gaps.forEach((g, i) => expect(g, `gap ${i}: ${gaps}`).toBeGreaterThanOrEqual(BACKOFF * 2 ** i - 5));
    expect(gaps[2]!).toBeGreaterThan(gaps[0]!);
    expect(await until(() => backlog('flaky'), (n) => n === 0)).toBe(0);
    expect(rx.at('/flaky')).toHaveLength(4);
  });

  it('a response slower than the deadline is a failed attempt and is retried', async () => {
    await makeSub(d, c.admin.token, p, 'orders', 'slow', { start_from: 'new', deliver: { mode: 'push', push: { url: `${base}/slow-once` } } });
    await publish(d, c.member.token, p, 'orders', [{ text: 'patience' }]);
    const hits = await until(() => rx.at('/slow-once'), (v) => v.length >= 2);
    expect(hits.map((h) => toEvent(h)).map((e: any) => e.deliveryattempt)).toEqual([1, 2]);
    // The second attempt started after the deadline plus backoff, not after the slow reply
    // (measured at the receiver, so the first arrival's jitter is allowed for).
    expect(hits[1]!.at - hits[0]!.at).toBeGreaterThanOrEqual(PUSH_TIMEOUT - 200);
    expect(hits[1]!.at - hits[0]!.at).toBeLessThan(3 * PUSH_TIMEOUT);
    expect(await until(() => backlog('slow'), (n) => n === 0)).toBe(0);
  });

  it('after dead_letter.after_attempts the message is republished with cai-dead-letter-* attributes', async () => {
    await makeSub(d, c.admin.token, p, 'orders', 'doomed', {
      start_from: 'new',
      deliver: { mode: 'push', push: { url: `${base}/huge-error` } },
      dead_letter: { topic: 'dlq', after_attempts: 3 },
    });
    const [id] = (await publish(d, c.member.token, p, 'orders', [{ text: 'poison', key: 'k9', attributes: { origin: 'test' } }])).body.message_ids;
    const parked = await until(() => pull(d, c.member.token, p, 'dlq', 'inspect', { timeout_ms: 200 }), (r) => r.body.messages.length > 0);
    const [m] = parked.body.messages;
    expect(text(m)).toBe('poison');
    expect(m.key).toBe('k9');
    expect(m.attributes).toMatchObject({
      origin: 'test',
      'cai-dead-letter-source-topic': 'orders',
      'cai-dead-letter-source-subscription': 'doomed',
      'cai-dead-letter-original-id': id,
      'cai-dead-letter-delivery-attempts': '3',
      'cai-dead-letter-last-error': expect.stringMatching(/^status 500: e+$/),
      'cai-dead-letter-first-failure-time': expect.stringMatching(/Z$/),
      'cai-dead-letter-original-publish-time': expect.stringMatching(/Z$/),
      'cai-dead-letter-time': expect.stringMatching(/Z$/),
    });
    // The error snippet is bounded: at most 64 KiB is read and a short excerpt kept.
    expect(m.attributes['cai-dead-letter-last-error'].length).toBeLessThan(300);
    expect(rx.at('/huge-error')).toHaveLength(3);
    expect(await until(() => backlog('doomed'), (n) => n === 0)).toBe(0);
  });

  it('at most 64 KiB of a response body is read: an endless error body still fails fast with its status', async () => {
    await makeSub(d, c.admin.token, p, 'orders', 'endless', {
      start_from: 'new',
      deliver: { mode: 'push', push: { url: `${base}/endless-error` } },
      dead_letter: { topic: 'dlq', after_attempts: 1 },
    });
    await publish(d, c.member.token, p, 'orders', [{ text: 'never ending' }]);
    const parked = await until(() => pull(d, c.member.token, p, 'dlq', 'inspect', { timeout_ms: 200 }), (r) => r.body.messages.some((m: any) => text(m) === 'never ending'));
    const m = parked.body.messages.find((x: any) => text(x) === 'never ending');
    // The status, not the 300 ms deadline: the worker stopped reading and closed the connection.
    expect(m.attributes['cai-dead-letter-last-error']).toMatch(/^status 500: x+$/);
    const [hit] = rx.at('/endless-error');
    expect(await until(() => rx.endlessClosed.length, (n) => n > 0)).toBe(1);
    expect(rx.endlessClosed[0]! - hit!.at).toBeLessThan(300);
    // Later tests publish to the same topic: this subscription must not take their messages.
    expect((await d.api('DELETE', subPath(p, 'orders', 'endless'), { token: c.admin.token })).status).toBe(202);
  });

  it('a dead-letter topic that is gone keeps the message retrying; once it exists again the message is parked there', async () => {
    await makeTopic(d, c.admin.token, p, 'dlq-later');
    await makeSub(d, c.admin.token, p, 'orders', 'dl-gone', {
      start_from: 'new',
      deliver: { mode: 'push', push: { url: `${base}/fail-forever/dl-gone` } },
      dead_letter: { topic: 'dlq-later', after_attempts: 2 },
    });
    expect((await d.api('DELETE', topicPath(p, 'dlq-later'), { token: c.admin.token })).status).toBe(202);
    await until(async () => (await d.api('GET', topicPath(p, 'dlq-later'), { token: c.member.token })).status, (s) => s === 404);
    await publish(d, c.member.token, p, 'orders', [{ text: 'nowhere to park' }]);
    // Past after_attempts the message is not dropped: it keeps its place and keeps being tried.
    const hits = await until(() => rx.at('/fail-forever/dl-gone'), (v) => v.length >= 4);
    expect(hits.length).toBeGreaterThanOrEqual(4);
    expect(await backlog('dl-gone')).toBe(1);
    await makeTopic(d, c.admin.token, p, 'dlq-later');
    await makeSub(d, c.admin.token, p, 'dlq-later', 'look');
    const parked = await until(() => pull(d, c.member.token, p, 'dlq-later', 'look', { timeout_ms: 200 }), (r) => r.body.messages.length > 0);
    expect(parked.body.messages.map(text)).toEqual(['nowhere to park']);
    expect(Number(parked.body.messages[0].attributes['cai-dead-letter-delivery-attempts'])).toBeGreaterThanOrEqual(4);
    expect(await until(() => backlog('dl-gone'), (n) => n === 0)).toBe(0);
    expect((await d.api('DELETE', subPath(p, 'orders', 'dl-gone'), { token: c.admin.token })).status).toBe(202);
  });

  it('a redirect is never followed and counts as a failure; without a dead-letter topic the message is dropped after max_deliver', async () => {
    await makeSub(d, c.admin.token, p, 'orders', 'redir', { start_from: 'new', max_deliver: 2, deliver: { mode: 'push', push: { url: `${base}/redirect` } } });
    await publish(d, c.member.token, p, 'orders', [{ text: 'go elsewhere' }]);
    await until(() => rx.at('/redirect'), (v) => v.length >= 2);
    expect(await until(() => backlog('redir'), (n) => n === 0)).toBe(0);
    await new Promise((r) => setTimeout(r, 3 * BACKOFF));
    expect(rx.at('/redirect')).toHaveLength(2);
    expect(rx.at('/ok-after-redirect')).toHaveLength(0);
  });

  it('a function target answering 400 (handler exception) is a failed attempt', async () => {
    await makeSub(d, c.admin.token, p, 'orders', 'fn', {
      start_from: 'new',
      deliver: { mode: 'push', push: { url: `${base}/function-error` } },
      dead_letter: { topic: 'dlq', after_attempts: 2 },
    });
    await publish(d, c.member.token, p, 'orders', [{ text: 'bad input' }]);
    const parked = await until(() => pull(d, c.member.token, p, 'dlq', 'inspect', { timeout_ms: 200 }), (r) => r.body.messages.some((m: any) => text(m) === 'bad input'));
    const m = parked.body.messages.find((x: any) => text(x) === 'bad input');
    expect(m.attributes['cai-dead-letter-last-error']).toMatch(/^status 400: .*handler raised/);
    expect(rx.at('/function-error')).toHaveLength(2);
  });

  it('key-shared push keeps one delivery per key in flight, in publish order; exclusive delivers one at a time', async () => {
    await makeSub(d, c.admin.token, p, 'orders', 'keyed', {
      start_from: 'new',
      type: 'key-shared',
      deliver: { mode: 'push', push: { url: `${base}/slowish/keyed`, content_mode: 'cloudevents-binary' } },
    });
    const keys = ['k1', 'k2', 'k3'];
    await publish(d, c.member.token, p, 'orders', Array.from({ length: 15 }, (_, i) => ({ text: `${keys[i % 3]}-${Math.floor(i / 3)}`, key: keys[i % 3] })));
    const unique = (v: Seen[]) => new Set(v.map((h) => h.body.toString())).size;
    const hits = await until(() => rx.at('/slowish/keyed'), (v) => unique(v) >= 15);
    for (const k of keys) {
      // First deliveries in order (a retry after a failed attempt may repeat one: at-least-once).
      const order = [...new Set(hits.filter((h) => h.headers['ce-subject'] === k).map((h) => h.body.toString()))];
      expect(order).toEqual([0, 1, 2, 3, 4].map((n) => `${k}-${n}`));
      expect(rx.maxInflight.get(`/slowish/keyed ${k}`)).toBe(1);
    }
    expect(rx.maxInflight.get('/slowish/keyed')).toBeGreaterThan(1); // different keys do go in parallel
    await makeSub(d, c.admin.token, p, 'orders', 'solo', {
      start_from: 'new',
      type: 'exclusive',
      deliver: { mode: 'push', push: { url: `${base}/slowish/solo`, content_mode: 'cloudevents-binary' } },
    });
    await publish(d, c.member.token, p, 'orders', Array.from({ length: 6 }, (_, i) => ({ text: `s${i}`, key: `any-${i}` })));
    const solo = await until(() => rx.at('/slowish/solo'), (v) => unique(v) >= 6);
    expect([...new Set(solo.map((h) => h.body.toString()))]).toEqual(['s0', 's1', 's2', 's3', 's4', 's5']);
    expect(rx.maxInflight.get('/slowish/solo')).toBe(1);
  });

  it('a failed message blocks its successors until it succeeds: per key for key-shared, for all of exclusive and failover', async () => {
    await makeSub(d, c.admin.token, p, 'orders', 'held', {
      start_from: 'new',
      type: 'key-shared',
      deliver: { mode: 'push', push: { url: `${base}/fail-first/held`, content_mode: 'cloudevents-binary' } },
    });
    await publish(d, c.member.token, p, 'orders', Array.from({ length: 6 }, (_, i) => ({ text: `${i % 2 ? 'b' : 'a'}-${i >> 1}`, key: i % 2 ? 'b' : 'a' })));
    const hits = await until(() => rx.at('/fail-first/held'), (v) => v.length >= 12);
    for (const k of ['a', 'b']) {
      const seen = hits.filter((h) => h.headers['ce-subject'] === k).map((h) => `${h.body.toString()}#${h.headers['ce-deliveryattempt']}`);
      expect(seen).toEqual([`${k}-0#1`, `${k}-0#2`, `${k}-1#1`, `${k}-1#2`, `${k}-2#1`, `${k}-2#2`]);
    }
    expect(await until(() => backlog('held'), (n) => n === 0)).toBe(0);
    for (const type of ['exclusive', 'failover']) {
      await makeSub(d, c.admin.token, p, 'orders', `held-${type}`, {
        start_from: 'new',
        type,
        deliver: { mode: 'push', push: { url: `${base}/fail-first/${type}`, content_mode: 'cloudevents-binary' } },
      });
      await publish(d, c.member.token, p, 'orders', ['x', 'y', 'z'].map((t, i) => ({ text: `${type}-${t}`, key: `k${i}` })));
      const got = await until(() => rx.at(`/fail-first/${type}`), (v) => v.length >= 6);
      expect(got.map((h) => `${h.body.toString()}#${h.headers['ce-deliveryattempt']}`)).toEqual(
        ['x', 'y', 'z'].flatMap((t) => [`${type}-${t}#1`, `${type}-${t}#2`]),
      );
    }
  });

  it('switching a push subscription to pull stops the worker; messages then wait for pulls', async () => {
    await makeSub(d, c.admin.token, p, 'orders', 'switch', { start_from: 'new', deliver: { mode: 'push', push: { url: `${base}/fail-forever` } } });
    await publish(d, c.member.token, p, 'orders', [{ text: 'switch me' }]);
    await until(() => rx.at('/fail-forever'), (v) => v.length >= 1);
    const r = await d.api('PATCH', subPath(p, 'orders', 'switch'), { token: c.admin.token, body: { deliver: { mode: 'pull' }, ack_deadline_seconds: 1 } });
    expect(r.status).toBe(200);
    const got = await until(() => pull(d, c.member.token, p, 'orders', 'switch', { timeout_ms: 500 }), (x) => x.body.messages.length > 0, 10_000);
    expect(got.body.messages.map(text)).toEqual(['switch me']);
    expect(got.body.messages[0].delivery_attempt).toBeGreaterThanOrEqual(2);
    const t = (await d.api('GET', topicPath(p, 'orders'), { token: c.member.token })).body;
    expect(t.stats.delivered).toBeGreaterThan(0);
  });
});
