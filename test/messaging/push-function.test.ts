import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HTTP, type CloudEvent } from 'cloudevents';
import { request } from 'undici';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { cast } from '../helpers/fixtures.js';
import { archive, deployForm, waitState } from '../agents/helpers.js';
import { runtimeAvailable } from '../../src/daemon/runtimes/index.js';
import { messagingConfig } from '../../src/daemon/services/messaging/config.js';
import { INTERNAL_CALL_HEADER } from '../../src/daemon/internal-call.js';
import { makeSub, makeTopic, publish, pull, subPath, text } from './helpers.js';

/**
 * Push to a real deployed python function (spec 3 §6, spec 1 §6.1): the shim answers 204 to a
 * CloudEvent (acknowledged) and 400 when the handler raises (a failed attempt, retried, then
 * dead-lettered). The daemon keeps INVOKE_AUTH_REQUIRED on: a push is a call from inside the
 * platform to the workload's internal address and passes without a credential, while an
 * outside caller still gets 401.
 */
// print() writes the text and the newline separately, so two deliveries handled on parallel
// threads could share one log line; the lock keeps one event per line.
const FN_PY = `import json
import threading

_print_lock = threading.Lock()

def handle(event):
    with _print_lock:
        print("EVENT " + json.dumps(event, sort_keys=True), flush=True)
    if event.get("fail"):
        raise ValueError("refused order %s" % event.get("n"))
    return {"ignored": "a CloudEvent answer is always an empty 204"}
`;

const python = await runtimeAvailable('python');
if (!python.ok) console.warn(`SKIPPED: push to a deployed python function: ${python.reason}`);

let d: TestDaemon;
let c: Awaited<ReturnType<typeof cast>>;
let p: string;
let fnUrl: string;

beforeAll(async () => {
  if (!python.ok) return;
  d = await startTestDaemon({
    messaging: { ...messagingConfig({}), pushBackoffBaseMs: 50, pushBackoffMaxMs: 200, pushTimeoutMs: 15_000 },
  });
  c = await cast(d);
  p = c.project.id;
  const r = await deployForm(d, c.member.token, { name: 'orders-fn', framework: 'function', runtime: 'python' }, archive({ 'main.py': FN_PY }), `?project=${c.project.slug}`);
  expect(r.status, JSON.stringify(r.body)).toBe(202);
  fnUrl = (await waitState(d, c.member.token, 'orders-fn', 'ready', c.project.slug, 60_000)).url;
  await makeTopic(d, c.admin.token, p, 'orders');
  await makeTopic(d, c.admin.token, p, 'parked');
  await makeSub(d, c.admin.token, p, 'parked', 'inspect');
}, 90_000);
afterAll(async () => d?.close());

async function until<T>(fn: () => Promise<T>, ok: (v: T) => boolean, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** What the handler printed: one JSON event per delivery it received. */
async function events(): Promise<any[]> {
  const r = await d.api('GET', `/v1/agents/orders-fn/logs/history?project=${c.project.slug}&limit=1000`, { token: c.member.token });
  expect(r.status).toBe(200);
  return r.body.lines.filter((l: any) => l.message.startsWith('EVENT ')).map((l: any) => JSON.parse(l.message.slice(6)));
}

/** Rebuilds the HTTP request the function received from what its shim handed over, and parses it with the CloudEvents SDK. */
function asReceived(e: any, mode: 'binary' | 'structured'): CloudEvent<any> {
  const { _cloudevent: attrs, ...data } = e;
  if (mode === 'binary') {
    const headers = Object.fromEntries(Object.entries(attrs as Record<string, string>).map(([k, v]) => [`ce-${k}`, v]));
    return HTTP.toEvent({ headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(data) }) as CloudEvent<any>;
  }
  return HTTP.toEvent({ headers: { 'content-type': 'application/cloudevents+json' }, body: JSON.stringify({ ...attrs, data }) }) as CloudEvent<any>;
}

describe.skipIf(!python.ok)('push to a deployed function (python runtime, process driver)', () => {
  it('the public gate still refuses outside callers: no credential gives 401, a forged internal mark too', async () => {
    const host = new URL(fnUrl).host;
    for (const headers of [{}, { [INTERNAL_CALL_HEADER]: 'guessed' }]) {
      // undici's request, not fetch: fetch drops a Host header.
      const r = await request(`http://127.0.0.1:${d.port}/`, { method: 'POST', headers: { host, 'content-type': 'application/json', 'ce-id': 'x', ...headers }, body: '{}' });
      expect(r.statusCode).toBe(401);
      expect(((await r.body.json()) as { error: string }).error).toMatch(/INVOKE_AUTH_REQUIRED/);
    }
  });

  it('204 acknowledges in both modes; a raising handler answers 400, is retried and dead-lettered after after_attempts', { timeout: 90_000 }, async () => {
    for (const mode of ['binary', 'structured'] as const) {
      await makeSub(d, c.admin.token, p, 'orders', `fn-${mode}`, {
        start_from: 'new',
        ack_deadline_seconds: 30,
        deliver: { mode: 'push', push: { url: `${fnUrl}/`, content_mode: `cloudevents-${mode}` } },
        dead_letter: { topic: 'parked', after_attempts: 3 },
      });
    }
    const attributes = { datacontenttype: 'application/json', origin: 'shop' };
    const ids = (
      await publish(d, c.member.token, p, 'orders', [
        { text: JSON.stringify({ n: 1 }), key: 'cust-7', attributes },
        { text: JSON.stringify({ n: 2, fail: true }), key: 'cust-8', attributes },
      ])
    ).body.message_ids as string[];

    // The good message is acknowledged by each subscription; the bad one is parked by each.
    const backlog = async (s: string) => (await d.api('GET', subPath(p, 'orders', s), { token: c.member.token })).body.stats.backlog;
    for (const mode of ['binary', 'structured']) expect(await until(() => backlog(`fn-${mode}`), (n) => n === 0)).toBe(0);
    const parked: any[] = [];
    await until(
      async () => {
        const r = await pull(d, c.member.token, p, 'parked', 'inspect', { timeout_ms: 500, auto_ack: true });
        parked.push(...r.body.messages);
        return parked.length;
      },
      (n) => n >= 2,
    );
    expect(parked).toHaveLength(2);
    for (const m of parked) {
      expect(JSON.parse(text(m))).toEqual({ n: 2, fail: true });
      expect(m.key).toBe('cust-8');
      expect(m.attributes).toMatchObject({
        origin: 'shop',
        'cai-dead-letter-source-topic': 'orders',
        'cai-dead-letter-original-id': ids[1],
        'cai-dead-letter-delivery-attempts': '3',
        'cai-dead-letter-last-error': expect.stringMatching(/^status 400: .*handler raised ValueError: refused order 2/),
      });
    }
    expect(parked.map((m) => m.attributes['cai-dead-letter-source-subscription']).sort()).toEqual(['fn-binary', 'fn-structured']);

    // What the function saw: the good message once per subscription, the bad one three times each,
    // each a complete CloudEvent of §6 as the official SDK reads it.
    const seen = await until(events, (v) => v.length >= 8);
    expect(seen).toHaveLength(8);
    for (const mode of ['binary', 'structured'] as const) {
      const mine = seen.filter((e) => String(e._cloudevent.subscription).endsWith(`/subscriptions/fn-${mode}`));
      expect(mine.map((e) => e.n).sort()).toEqual([1, 2, 2, 2]); // shared: concurrent, any order
      const good = asReceived(mine.find((e) => e.n === 1), mode);
      expect(good).toMatchObject({
        type: 'ai.platform.pubsub.message.v1',
        id: ids[0],
        source: `persistent://p-${c.project.short}/main/orders`,
        subject: 'cust-7',
        subscription: `projects/${c.project.short}/topics/orders/subscriptions/fn-${mode}`,
        'attr-origin': 'shop',
      });
      expect(good.data).toEqual({ n: 1 });
      expect(String((good as any).deliveryattempt)).toBe('1');
      const attempts = mine.filter((e) => e.n === 2).map((e) => String(asReceived(e, mode).deliveryattempt));
      expect(attempts).toEqual(['1', '2', '3']);
    }
  });
});
