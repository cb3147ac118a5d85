/**
 * The function request contract (spec 1 §4.13) and CloudEvent delivery (§6.1) as one table,
 * run against every runtime by the <runtime>.test.ts files. Each row says what goes in and,
 * per runtime, what must come out; the sample handlers print `EVENT <json>` for what they got,
 * so rows also assert the event the handler received.
 */
import { CloudEvent, HTTP } from 'cloudevents';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runtimeAvailable, runtimeCommand, type Runtime, type RuntimeOptions } from '../../src/daemon/runtimes/index.js';
import { connect } from 'node:net';
import { rawRequest, SECRET_HEADER, startWorkload, type RunningWorkload } from './helpers.js';

const MAX = 8 * 1024 * 1024;

interface Request {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
}

interface Outcome {
  status: number;
  /** The exact JSON body, when the row pins it. */
  body?: unknown;
  /** The start of body.error, for refusals. */
  error?: string;
  /** What the handler must have received; `null` means the handler must not have run. */
  event?: unknown;
}

type PerRuntime = Outcome | ({ [R in Runtime]?: Outcome } & { other: Outcome });

interface Row {
  name: string;
  request: () => Request;
  expect: PerRuntime;
}

const json = (value: unknown): Request => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(value),
});

/** The SDK's emitters give headers and body; we send them with fetch, as a trigger would. */
function cloudEvent(mode: 'binary' | 'structured', data: unknown, extra: Record<string, unknown> = {}): Request {
  const event = new CloudEvent({ id: 'evt-1', source: '/tests/shims', type: 'test.shim.v1', subject: 'row', time: '2026-01-02T03:04:05.000Z', data, ...extra });
  const message = mode === 'binary' ? HTTP.binary(event) : HTTP.structured(event);
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(message.headers)) if (v !== undefined) headers[k] = String(v);
  const body = message.body;
  return {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : body instanceof Uint8Array ? body : JSON.stringify(body),
  };
}

/** Every ce-* attribute the SDK sends in binary mode for cloudEvent(), as python must attach it. */
const binaryAttributes = (req: Request) =>
  Object.fromEntries(
    Object.entries(req.headers ?? {})
      .filter(([k]) => k.toLowerCase().startsWith('ce-'))
      .map(([k, v]) => [k.toLowerCase().slice(3), v]),
  );

const structuredAttributes = (req: Request) => {
  const { data: _d, data_base64: _b, ...rest } = JSON.parse(String(req.body));
  return rest;
};

const refusedJson = { status: 400, error: 'invalid JSON body', event: null };
const tooBig = (runtime: Runtime): Outcome =>
  runtime === 'go' ? { status: 413, event: null } : { status: 413, body: { error: `body exceeds ${MAX} bytes` }, event: null };

/** A JSON object whose serialized size is exactly n bytes. */
const objectOfSize = (n: number) => {
  const shell = JSON.stringify({ pad: '' }).length;
  return JSON.stringify({ pad: 'x'.repeat(n - shell) });
};

// Rows whose expectation depends on the request itself are built lazily per runtime.
function rows(runtime: Runtime): Row[] {
  // An extension attribute travels too: ce-tenant in binary mode, a top-level key in structured.
  const binaryHello = cloudEvent('binary', { hello: 'world' }, { tenant: 'acme' });
  const structuredHello = cloudEvent('structured', { hello: 'world' }, { tenant: 'acme' });
  const py = runtime === 'python';
  return [
    { name: 'GET /healthz answers ok without the handler', request: () => ({ path: '/healthz' }), expect: { status: 200, body: { status: 'ok' }, event: null } },
    {
      name: 'any other GET gives the handler an empty object (no path, no query)',
      request: () => ({ path: '/some/path?q=1' }),
      expect: { status: 200, body: { received: {} }, event: {} },
    },
    {
      name: 'POST with a JSON object passes it parsed',
      request: () => json({ a: 1, nested: { b: [1, 'two', null] } }),
      expect: { status: 200, body: { received: { a: 1, nested: { b: [1, 'two', null] } } }, event: { a: 1, nested: { b: [1, 'two', null] } } },
    },
    {
      name: 'POST with non-JSON text',
      request: () => ({ method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hello world' }),
      expect: { python: { status: 200, body: { received: { data: 'hello world' } }, event: { data: 'hello world' } }, other: refusedJson },
    },
    {
      name: 'POST with bytes that are not UTF-8',
      request: () => ({ method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: new Uint8Array([0xff, 0xfe, 0x00, 0x41]) }),
      expect: { python: { status: 200, body: { received: { data_base64: '//4AQQ==' } }, event: { data_base64: '//4AQQ==' } }, other: refusedJson },
    },
    {
      name: 'POST with a JSON scalar',
      request: () => json(42),
      expect: {
        python: { status: 200, body: { received: { data: 42 } }, event: { data: 42 } },
        go: refusedJson,
        other: { status: 200, body: { received: 42 }, event: 42 },
      },
    },
    {
      name: 'POST with a JSON list',
      request: () => json([1, 'two']),
      expect: {
        python: { status: 200, body: { received: { data: [1, 'two'] } }, event: { data: [1, 'two'] } },
        go: refusedJson,
        other: { status: 200, body: { received: [1, 'two'] }, event: [1, 'two'] },
      },
    },
    {
      name: 'POST with a JSON string scalar',
      request: () => json('just text'),
      expect: {
        python: { status: 200, body: { received: { data: 'just text' } }, event: { data: 'just text' } },
        go: refusedJson,
        other: { status: 200, body: { received: 'just text' }, event: 'just text' },
      },
    },
    {
      name: 'statusCode in the returned object sets the status; the whole object is the body',
      request: () => json({ status: 201 }),
      expect: { status: 201, body: { statusCode: 201, received: { status: 201 } }, event: { status: 201 } },
    },
    {
      name: 'statusCode can be an error status',
      request: () => json({ status: 418 }),
      expect: { status: 418, body: { statusCode: 418, received: { status: 418 } }, event: { status: 418 } },
    },
    {
      name: 'statusCode 204 sends no body',
      request: () => json({ status: 204 }),
      expect: { status: 204, body: '', event: { status: 204 } },
    },
    {
      name: 'a statusCode that is not an HTTP status is the handler’s error: 500',
      request: () => json({ status: 'teapot' }),
      expect: { status: 500, error: 'handler returned an invalid statusCode', event: { status: 'teapot' } },
    },
    {
      name: 'a raised exception gives 500 handler raised',
      request: () => json({ fail: true }),
      expect: { status: 500, error: 'handler raised', event: { fail: true } },
    },
    {
      name: 'a body of exactly 8 MiB is accepted',
      request: () => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: objectOfSize(MAX) }),
      expect: { status: 200 },
    },
    {
      name: 'a body over 8 MiB gives 413 before the handler runs',
      request: () => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: objectOfSize(MAX + 1) }),
      expect: tooBig(runtime),
    },
    {
      name: 'CloudEvent binary mode (SDK): empty 204, handler gets the data',
      request: () => binaryHello,
      expect: { status: 204, body: '', event: py ? { hello: 'world', _cloudevent: { ...binaryAttributes(binaryHello), tenant: 'acme' } } : { hello: 'world' } },
    },
    {
      name: 'CloudEvent structured mode (SDK): empty 204, handler gets only data',
      request: () => structuredHello,
      expect: { status: 204, body: '', event: py ? { hello: 'world', _cloudevent: { ...structuredAttributes(structuredHello), tenant: 'acme' } } : { hello: 'world' } },
    },
    {
      name: 'CloudEvent return value is discarded, statusCode included',
      request: () => cloudEvent('binary', { status: 201 }),
      expect: { status: 204, body: '' },
    },
    {
      name: 'CloudEvent binary mode: handler exception gives 400 handler raised',
      request: () => cloudEvent('binary', { fail: true }),
      expect: { status: 400, error: 'handler raised' },
    },
    {
      name: 'CloudEvent structured mode: handler exception gives 400 handler raised',
      request: () => cloudEvent('structured', { fail: true }),
      expect: { status: 400, error: 'handler raised' },
    },
    {
      name: 'CloudEvent binary mode: same 8 MiB cap',
      request: () => ({ ...binaryHello, body: objectOfSize(MAX + 1) }),
      expect: tooBig(runtime),
    },
    {
      name: 'CloudEvent binary mode with a non-JSON body follows the runtime body rules',
      request: () => ({ method: 'POST', headers: { 'ce-id': 'e2', 'ce-source': '/t', 'ce-type': 't', 'ce-specversion': '1.0', 'content-type': 'text/plain' }, body: 'plain' }),
      expect: {
        python: { status: 204, body: '', event: { data: 'plain', _cloudevent: { id: 'e2', source: '/t', type: 't', specversion: '1.0' } } },
        other: refusedJson,
      },
    },
  ];
}

/** Go-only rows: a panic is an exception too. */
function goRows(): Row[] {
  return [
    {
      name: 'a panicking handler gives 500 handler raised (and the server survives)',
      request: () => json({ panic: true }),
      expect: { status: 500, error: 'handler raised panic: kaboom', event: { panic: true } },
    },
    {
      name: 'a panicking handler on a CloudEvent gives 400 handler raised',
      request: () => cloudEvent('binary', { panic: true }),
      expect: { status: 400, error: 'handler raised panic: kaboom', event: { panic: true } },
    },
  ];
}

/** Python-only rows: payload wins over attached attributes, and Content-Length is read. */
function pythonRows(): Row[] {
  const attrs = { id: 'evt-1', source: '/tests/shims', type: 'test.shim.v1', subject: 'row', time: '2026-01-02T03:04:05.000Z', specversion: '1.0' };
  return [
    {
      name: 'binary mode: _cloudevent holds exactly the ce-* headers, named without the prefix',
      request: () => cloudEvent('binary', { n: 1 }, { tenant: 'acme' }),
      expect: { status: 204, body: '', event: { n: 1, _cloudevent: { ...attrs, tenant: 'acme' } } },
    },
    {
      name: 'structured mode: _cloudevent holds every envelope key but data',
      request: () => cloudEvent('structured', { n: 2 }, { tenant: 'acme' }),
      expect: { status: 204, body: '', event: { n: 2, _cloudevent: { ...attrs, tenant: 'acme' } } },
    },
    {
      name: 'binary mode: the payload\u2019s own _cloudevent wins and nothing is attached',
      request: () => cloudEvent('binary', { _cloudevent: 'mine', x: 1 }),
      expect: { status: 204, body: '', event: { _cloudevent: 'mine', x: 1 } },
    },
    {
      name: 'structured mode: the payload\u2019s own _cloudevent wins and nothing is attached',
      request: () => cloudEvent('structured', { _cloudevent: { own: true }, x: 2 }),
      expect: { status: 204, body: '', event: { _cloudevent: { own: true }, x: 2 } },
    },
    {
      name: 'structured mode: a scalar data is wrapped and the attributes attached',
      request: () => cloudEvent('structured', 'text data'),
      expect: { status: 204, body: '', event: { data: 'text data', _cloudevent: { id: 'evt-1', source: '/tests/shims', type: 'test.shim.v1', subject: 'row', time: '2026-01-02T03:04:05.000Z', specversion: '1.0' } } },
    },
  ];
}

async function send(w: RunningWorkload, req: Request): Promise<{ status: number; text: string; contentType: string | null }> {
  const res = await fetch(`${w.url}${req.path ?? '/'}`, { method: req.method ?? 'GET', headers: { ...req.headers, ...w.headers }, body: req.body });
  return { status: res.status, text: await res.text(), contentType: res.headers.get('content-type') };
}

function outcomeFor(runtime: Runtime, e: PerRuntime): Outcome {
  return 'other' in e ? (e[runtime] ?? e.other) : e;
}

/** Defines the whole table for one runtime, starting its shim once as a real process. */
export async function defineShimSuite(runtime: Runtime, fixture: string = runtime, opts: RuntimeOptions = {}): Promise<void> {
  const available = await runtimeAvailable(runtime);
  if (!available.ok) console.warn(`SKIPPING ${runtime} shim tests: ${available.reason}`);

  describe.skipIf(!available.ok)(`${runtime} function shim (${fixture})`, () => {
    let w: RunningWorkload;
    beforeAll(async () => {
      w = await startWorkload(fixture, (dir) => runtimeCommand(runtime, dir, opts));
    }, 120_000);
    afterAll(async () => {
      await w?.stop();
    });

    const table = [...rows(runtime), ...(runtime === 'python' ? pythonRows() : runtime === 'go' ? goRows() : [])];
    for (const row of table) {
      it(row.name, async () => {
        const want = outcomeFor(runtime, row.expect);
        const res = await send(w, row.request());
        expect(res.status, res.text.slice(0, 300)).toBe(want.status);
        if (want.status === 204) expect(res.text).toBe('');
        else expect(res.contentType).toMatch(/^application\/json/);
        if (want.body !== undefined && want.status !== 204) expect(JSON.parse(res.text)).toEqual(want.body);
        if (want.error !== undefined) expect(JSON.parse(res.text).error).toMatch(new RegExp(`^${want.error}`));
        if (want.status >= 400 && want.body === undefined) expect(typeof JSON.parse(res.text).error).toBe('string'); // {"error": ...}
        if (want.event !== undefined && want.event !== null) expect(await w.takeEvent()).toEqual(want.event);
        if (want.event === null) await expectNoEventSince(w, res.status);
        else if (want.event === undefined && want.status !== 413) await w.takeEvent(); // keep the log cursor in step
      });
    }

    it('a request without the instance secret, or with a wrong one, gets 403 and never reaches the handler', async () => {
      const wrong = [{}, { [SECRET_HEADER]: 'x'.repeat(w.secret.length) }, { [SECRET_HEADER]: w.secret.slice(1) }, { [SECRET_HEADER]: `${w.secret.slice(0, -1)}${w.secret.endsWith('A') ? 'B' : 'A'}` }];
      for (const headers of wrong) {
        const res = await fetch(`${w.url}/`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: '{"leak":1}' });
        expect(res.status).toBe(403);
        expect(await res.json()).toEqual({ error: 'forbidden: this address answers only requests routed by the platform' });
      }
      expect((await fetch(`${w.url}/healthz`)).status).toBe(403);
      expect((await fetch(`${w.url}/x`)).status).toBe(403);
      await expectNoEventSince(w, 403);
    });

    it('structured data_base64 reaches the handler decoded', async () => {
      const req = cloudEvent('structured', new TextEncoder().encode(JSON.stringify({ fromBase64: true })));
      expect(JSON.parse(String(req.body)).data_base64).toBeTypeOf('string'); // the SDK chose data_base64
      const res = await send(w, req);
      expect(res.status).toBe(204);
      const got = (await w.takeEvent()) as Record<string, unknown>;
      expect(got.fromBase64).toBe(true);
      if (runtime === 'python') expect(Object.keys(got._cloudevent as object)).not.toContain('data_base64');
    });

    it(`a Content-Length that is not a number: ${runtime === 'python' ? '400 invalid Content-Length' : 'refused by the HTTP layer, never that text'}`, async () => {
      const res = await rawRequest(w.port, 'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\nConnection: close\r\n\r\n{}', { secret: w.secret });
      expect(res.status).toBe(400);
      if (runtime === 'python') expect(JSON.parse(res.body)).toEqual({ error: 'invalid Content-Length' });
      else expect(res.body).not.toContain('invalid Content-Length');
    });

    it('a chunked request body (no Content-Length) is read whole', async () => {
      const body = JSON.stringify({ chunked: 'yes' });
      const res = await rawRequest(
        w.port,
        `POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n` +
          `${(5).toString(16)}\r\n${body.slice(0, 5)}\r\n${(body.length - 5).toString(16)}\r\n${body.slice(5)}\r\n0\r\n\r\n`,
        { secret: w.secret },
      );
      expect(res.status).toBe(200);
      expect(JSON.parse(res.body)).toEqual({ received: { chunked: 'yes' } });
      await w.takeEvent();
    });

    it('honours Expect: 100-continue (curl sends it for bodies over 1 KiB)', async () => {
      const body = JSON.stringify({ expect: 'continue' });
      const res = await expectContinue(w.port, body, w.secret);
      expect(res.interim).toMatch(/^HTTP\/1\.1 100 /);
      expect(res.status).toBe(200);
      expect(JSON.parse(res.body)).toEqual({ received: { expect: 'continue' } });
      await w.takeEvent();
    });

    it('a GET with a body ignores it and the kept-alive connection stays usable', async () => {
      const res = await rawRequest(
        w.port,
        'GET /x HTTP/1.1\r\nHost: x\r\nContent-Length: 7\r\n\r\n{"a":1}GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
        { untilClose: true, secret: w.secret },
      );
      expect(res.status).toBe(200);
      expect(res.body).toMatch(/^\{"received":\{\}\}/);
      // Ruby answers one request per connection; the others must answer the second one too.
      if (runtime !== 'ruby') expect(res.body).toMatch(/HTTP\/1\.1 200 [\s\S]*\{"status":"ok"\}$/);
      expect(await w.takeEvent()).toEqual({});
    });

    it('HEAD runs like GET and sends no body', async () => {
      const res = await fetch(`${w.url}/x`, { method: 'HEAD', headers: w.headers });
      expect(res.status).toBe(200);
      expect(await res.text()).toBe('');
      expect(await w.takeEvent()).toEqual({});
    });

    it('the handler’s own output reaches stdout, where the daemon collects logs', () => {
      expect(w.output()).toMatch(/^EVENT \{/m);
    });

    it('serves concurrent requests', async () => {
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => send(w, json({ i }))));
      expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
      expect(results.map((r) => JSON.parse(r.text).received.i)).toEqual(Array.from({ length: 20 }, (_, i) => i));
      for (let i = 0; i < 20; i++) await w.takeEvent();
    });
  });
}

/** Sends the head with Expect: 100-continue, waits for the interim response, then the body. */
function expectContinue(port: number, body: string, secret: string): Promise<{ interim: string; status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, '127.0.0.1');
    let data = '';
    let sent = false;
    sock.setEncoding('utf8');
    sock.on('error', reject);
    sock.on('data', (chunk: string) => {
      data += chunk;
      if (!sent && /^HTTP\/1\.1 100 [^\r]*\r\n\r\n/.test(data)) {
        sent = true;
        sock.write(body);
      }
      const m = /^(HTTP\/1\.1 100 [^\r]*)\r\n\r\nHTTP\/1\.1 (\d{3})[\s\S]*?\r\n\r\n([\s\S]*)$/.exec(data);
      const len = /\r\ncontent-length: *(\d+)/i.exec(data)?.[1];
      if (m && len !== undefined && Buffer.byteLength(m[3]!) >= Number(len)) {
        sock.destroy();
        resolve({ interim: m[1]!, status: Number(m[2]), body: m[3]! });
      }
    });
    sock.write(
      `POST / HTTP/1.1\r\nHost: x\r\n${SECRET_HEADER}: ${secret}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nExpect: 100-continue\r\n\r\n`,
    );
  });
}

/** Refused requests must not reach the handler: no EVENT line appears. */
async function expectNoEventSince(w: RunningWorkload, _status: number): Promise<void> {
  await expect(w.takeEvent(150)).rejects.toThrow(/no EVENT line/);
}
