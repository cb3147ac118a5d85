import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BEARER, INSTANCE_SECRET, callBody, removeDir, serve, versionDir, type Served } from './runtime-helpers.js';

/**
 * The runtime's HTTP surface (--serve) as a real process: the official SDK client connects,
 * and raw JSON-RPC shows the stateless details, authentication and the request timeout.
 */
let dir: string;
let s: Served;
beforeAll(async () => {
  dir = await versionDir({
    add: `from platform_mcp import tool\n\n@tool\ndef add(a: int, b: int = 1) -> int:\n    """Adds two integers.\n\n    Args:\n        a: the first\n        b: the second\n    """\n    return a + b\n`,
    boom: `@tool\ndef boom(reason: str):\n    """Always fails."""\n    raise ValueError("refused: " + reason)\n`,
    weather: `from typing import Literal\n\n@tool\nasync def weather(city: str, units: Literal["c", "f"] = "c") -> dict:\n    """Weather for a city."""\n    return {"city": city, "temp": 21 if units == "c" else 70, "units": units}\n`,
    sleepy: `import time\n\n@tool\ndef sleepy(seconds: float):\n    time.sleep(seconds)\n    return "woke"\n`,
    echo: `@tool\ndef echo(text: str, credentials=None):\n    return text\n`,
    nan: `@tool\ndef nan():\n    return {"x": float("nan")}\n`,
    kinds: `import enum\nfrom typing import Optional\n\nclass Size(enum.Enum):\n    S = "s"\n    L = "l"\n\n@tool\ndef kinds(size: Size, pair: tuple[int, int], tags: Optional[set[str]] = None, size2: Size = Size.L):\n    return [repr(size), type(pair).__name__, sorted(tags) if tags is not None else None, type(tags).__name__, size2.value]\n`,
    place: `import dataclasses, enum\nfrom typing import Optional\n\nclass Size(enum.Enum):\n    S = "s"\n    L = "l"\n\n@dataclasses.dataclass\nclass Spot:\n    city: str\n    size: Size = Size.L\n    at: tuple[float, float] = (0.0, 0.0)\n\n@tool\ndef place(spot: Spot, near: Optional[Spot] = None):\n    return [type(spot).__name__, spot.city, spot.size.value, type(spot.at).__name__, near.city if near else None]\n`,
  });
  s = await serve(dir, { MCP_REQUEST_TIMEOUT_SECONDS: '1' });
});
afterAll(async () => {
  await s?.stop();
  removeDir(dir);
});

const sdkClient = async (token = BEARER) => {
  const transport = new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}`, 'x-platform-instance-secret': INSTANCE_SECRET } },
  });
  const client = new Client({ name: 'runtime-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
};

describe('the official MCP TypeScript SDK', () => {
  it('connects, lists the derived schemas, calls a tool, sees a tool error', async () => {
    const client = await sdkClient();
    try {
      expect(client.getServerVersion()).toEqual({ name: 'test-server', version: '7' });
      expect(client.getServerCapabilities()).toMatchObject({ tools: {} });
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(['add', 'boom', 'echo', 'kinds', 'nan', 'place', 'sleepy', 'weather']);
      expect(tools[0]).toEqual({
        name: 'add',
        description: 'Adds two integers.',
        inputSchema: {
          type: 'object',
          properties: { a: { type: 'integer', description: 'the first' }, b: { type: 'integer', default: 1, description: 'the second' } },
          required: ['a'],
        },
      });
      expect(await client.callTool({ name: 'add', arguments: { a: 40, b: 2 } })).toEqual({ content: [{ type: 'text', text: '42' }], isError: false });
      const boom = await client.callTool({ name: 'boom', arguments: { reason: 'nope' } });
      expect(boom).toEqual({ content: [{ type: 'text', text: 'ValueError: refused: nope' }], isError: true });
      const weather = await client.callTool({ name: 'weather', arguments: { city: 'Oslo', units: 'f' } });
      expect(weather.structuredContent).toEqual({ city: 'Oslo', temp: 70, units: 'f' });
      expect(JSON.parse((weather.content as Array<{ text: string }>)[0].text)).toEqual({ city: 'Oslo', temp: 70, units: 'f' });
      await client.ping();
    } finally {
      await client.close();
    }
  });

  it('a wrong bearer fails the connection', async () => {
    await expect(sdkClient('svc_mcp_' + 'f'.repeat(64))).rejects.toThrow(/401|nauthorized/);
  });
});

describe('raw JSON-RPC', () => {
  it('tools/call and tools/list with no initialize and no session id', async () => {
    const r = await s.post(callBody('add', { a: 2 }, 'x-1'));
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/json');
    expect(r.headers.get('mcp-session-id')).toBeNull();
    expect(r.json).toEqual({ jsonrpc: '2.0', id: 'x-1', result: { content: [{ type: 'text', text: '3' }], isError: false } });
    const list = await s.post({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    expect(list.json.result.tools.map((t: { name: string }) => t.name)).toEqual(['add', 'boom', 'echo', 'kinds', 'nan', 'place', 'sleepy', 'weather']);
  });

  it('initialize answers the asked version when supported, else the latest', async () => {
    const init = (protocolVersion: string) =>
      s.post({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '0' } } });
    for (const v of SUPPORTED_PROTOCOL_VERSIONS) expect((await init(v)).json.result.protocolVersion).toBe(v);
    const other = await init('2023-01-01');
    expect(other.json.result).toEqual({
      protocolVersion: LATEST_PROTOCOL_VERSION,
      capabilities: { tools: { listChanged: false } },
      serverInfo: { name: 'test-server', version: '7' },
    });
  });

  it('notifications get 202 with no body; batches get arrays; ping', async () => {
    const note = await s.post({ jsonrpc: '2.0', method: 'notifications/initialized' });
    expect([note.status, note.text]).toEqual([202, '']);
    const batch = await s.post([
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      callBody('echo', { text: 'hi' }, 2),
      { jsonrpc: '2.0', id: 3, method: 'nope/nope' },
    ]);
    expect(batch.json).toEqual([
      { jsonrpc: '2.0', id: 1, result: {} },
      { jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: 'hi' }], isError: false } },
      { jsonrpc: '2.0', id: 3, error: { code: -32601, message: 'Method not found: nope/nope' } },
    ]);
    const notes = await s.post([{ jsonrpc: '2.0', method: 'notifications/initialized' }, { jsonrpc: '2.0', id: 'srv-1', result: {} }]);
    expect([notes.status, notes.text]).toEqual([202, '']);
  });

  it('Accept with only text/event-stream gets one SSE message event', async () => {
    const r = await s.post(callBody('add', { a: 1 }, 9), { accept: 'text/event-stream' });
    expect(r.headers.get('content-type')).toBe('text/event-stream');
    expect(r.text).toBe('event: message\ndata: {"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":"2"}],"isError":false}}\n\n');
  });

  it('unknown tool is -32602; bad arguments are tool errors; malformed JSON is a parse error', async () => {
    expect((await s.post(callBody('missing'))).json.error).toEqual({ code: -32602, message: 'Unknown tool: missing' });
    const cases: Array<[Record<string, unknown>, string]> = [
      [{}, 'invalid arguments for tool add: missing required argument: a'],
      [{ a: 'one' }, 'invalid arguments for tool add: a: expected integer, got string'],
      [{ a: true }, 'invalid arguments for tool add: a: expected integer, got boolean'],
    ];
    for (const [args, text] of cases) {
      expect((await s.post(callBody('add', args))).json.result).toEqual({ content: [{ type: 'text', text }], isError: true });
    }
    const enumBad = await s.post(callBody('weather', { city: 'x', units: 'k' }));
    expect(enumBad.json.result.content[0].text).toBe('invalid arguments for tool weather: units: must be one of "c", "f"');
    const kinds = await s.post(callBody('kinds', { size: 's', pair: [1, 2], tags: ['b', 'a', 'b'] }));
    expect(JSON.parse(kinds.json.result.content[0].text)).toEqual(["<Size.S: 's'>", 'tuple', ['a', 'b'], 'set', 'l']);
    const place = await s.post(callBody('place', { spot: { city: 'Oslo', size: 's', at: [59.9, 10.7] }, near: { city: 'Bergen' } }));
    expect(JSON.parse(place.json.result.content[0].text)).toEqual(['Spot', 'Oslo', 's', 'tuple', 'Bergen']);
    const placeBad = await s.post(callBody('place', { spot: { size: 's' } }));
    expect(placeBad.json.result).toMatchObject({ isError: true, content: [{ text: 'invalid arguments for tool place: spot: missing required argument: city' }] });
    const nan = await s.post(callBody('nan'));
    expect(nan.json.result).toEqual({ content: [{ type: 'text', text: 'the tool returned a value that is not JSON: Out of range float values are not JSON compliant' }], isError: true });
    const parse = await s.post('{not json');
    expect(parse.status).toBe(400);
    expect(parse.json.error.code).toBe(-32700);
  });

  it('a hanging tool is cut at MCP_REQUEST_TIMEOUT_SECONDS; the server keeps answering', async () => {
    const started = Date.now();
    const r = await s.post(callBody('sleepy', { seconds: 5 }));
    expect(r.json.result).toEqual({ content: [{ type: 'text', text: 'tool sleepy timed out after 1s' }], isError: true });
    expect(Date.now() - started).toBeLessThan(3000);
    expect((await s.post(callBody('add', { a: 1 }))).json.result.isError).toBe(false);
  });
});

describe('stuck calls', () => {
  it('16 calls still running past the timeout make the process exit so the supervisor restarts it', async () => {
    const d = await versionDir({ hang: `import threading\n\n@tool\ndef hang():\n    threading.Event().wait()\n` });
    const t = await serve(d, { MCP_REQUEST_TIMEOUT_SECONDS: '0.5' });
    try {
      const exit = new Promise<number | null>((resolve) => t.child.once('exit', (code) => resolve(code)));
      const answers = await Promise.all(Array.from({ length: 16 }, (_, i) => t.post(callBody('hang', {}, i)).catch(() => undefined)));
      // The exit may overtake the last few answers; every answer that arrived is the timeout.
      const arrived = answers.filter((a) => a?.json);
      expect(arrived.length).toBeGreaterThan(0);
      for (const a of arrived) expect(a!.json.result.content[0].text).toBe('tool hang timed out after 0.5s');
      expect(await exit).toBe(70);
      expect(t.output()).toContain('16 tool calls are still running past the 0.5s timeout; exiting so the platform restarts this instance');
    } finally {
      await t.stop();
      removeDir(d);
    }
  });
});

describe('HTTP rules', () => {
  it('missing or wrong bearer: 401 with WWW-Authenticate: Bearer', async () => {
    for (const authorization of [undefined, 'Bearer wrong', `Basic ${BEARER}`]) {
      const r = await s.post(callBody('add', { a: 1 }), { authorization });
      expect(r.status, String(authorization)).toBe(401);
      expect(r.headers.get('www-authenticate')).toBe('Bearer');
    }
  });

  it('unknown MCP-Protocol-Version: 400; a known one passes', async () => {
    const bad = await s.post(callBody('add', { a: 1 }), { 'mcp-protocol-version': '1999-01-01' });
    expect(bad.status).toBe(400);
    expect(bad.json.error.message).toMatch(/Unsupported protocol version: 1999-01-01/);
    expect((await s.post(callBody('add', { a: 1 }), { 'mcp-protocol-version': '2025-06-18' })).status).toBe(200);
  });

  it('missing instance secret: 403 before anything else, /healthz included', async () => {
    expect((await s.post(callBody('add', { a: 1 }), { 'x-platform-instance-secret': undefined })).status).toBe(403);
    expect((await fetch(`${s.url}/healthz`)).status).toBe(403);
    const ok = await fetch(`${s.url}/healthz`, { headers: { 'x-platform-instance-secret': INSTANCE_SECRET } });
    expect([ok.status, await ok.json()]).toEqual([200, { status: 'ok' }]);
  });

  it('GET and DELETE /mcp: 405 (stateless, no stream and no session)', async () => {
    for (const method of ['GET', 'DELETE']) {
      const r = await fetch(`${s.url}/mcp`, { method, headers: { 'x-platform-instance-secret': INSTANCE_SECRET, authorization: `Bearer ${BEARER}` } });
      expect(r.status, method).toBe(405);
      expect(r.headers.get('allow')).toBe('POST');
      await r.text();
    }
  });

  it('tool code sees neither the bearer nor the instance secret in its environment', async () => {
    const d = await versionDir({ env: `import os\n\n@tool\ndef env():\n    return sorted(k for k in os.environ if k in ("SVC_MCP_AUTH_TOKEN", "PLATFORM_INSTANCE_SECRET", "SVC_PROJECT_KEY"))\n` });
    const t = await serve(d, { SVC_PROJECT_KEY: 'svc_wl_x' });
    try {
      expect((await t.post(callBody('env'))).json.result.content[0].text).toBe('[]');
    } finally {
      await t.stop();
      removeDir(d);
    }
  });
});
