import type { TestDaemon } from '../helpers/daemon.js';

/** Shared by the MCP area tests: tool sources, polling, and a raw JSON-RPC call. */

export const ADD_PY = `from platform_mcp import tool

@tool
def add(a: int, b: int = 2) -> int:
    """Add two numbers.

    Args:
        a: the first number
        b: the second number
    """
    return a + b
`;

export const BOOM_PY = `@tool
def boom(reason: str) -> str:
    """Always raises."""
    raise ValueError("boom: " + reason)
`;

export const SYNTAX_ERROR_PY = `@tool
def broken(x: int) -> int
    return x
`;

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const base = (project: string, name?: string) => `/v1/projects/${project}/mcpservers${name ? `/${name}` : ''}`;

/** Polls a server until its newest version settles (ready or failed) at `version` or beyond. */
export async function waitVersion(d: TestDaemon, token: string, project: string, name: string, version: number, want: 'ready' | 'failed' = 'ready', timeoutMs = 30_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  let last: any;
  while (Date.now() < deadline) {
    const r = await d.api('GET', `${base(project, name)}/versions`, { token });
    last = r.body;
    const v = r.body.versions?.find((x: any) => x.version === version);
    if (v && (v.state === 'ready' || v.state === 'failed')) {
      if (v.state !== want) throw new Error(`version ${version} of ${name} is ${v.state}, wanted ${want}: ${JSON.stringify(v)}`);
      return (await d.api('GET', base(project, name), { token })).body.mcp_server;
    }
    await sleep(25);
  }
  throw new Error(`version ${version} of ${name} did not settle: ${JSON.stringify(last)}`);
}

/** One stateless JSON-RPC request to a protocol endpoint (no initialize, no session). */
export async function rpc(url: string, bearer: string | undefined, method: string, params?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(bearer ? { authorization: `Bearer ${bearer}` } : {}), ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, ...(params === undefined ? {} : { params }) }),
  });
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    // SSE or text
  }
  return { status: res.status, body, headers: res.headers, text };
}

/** The bearer, read as the daemon itself does (no API returns it): for tests that call the endpoint directly. */
export async function bearerFor(d: TestDaemon, project: string, name: string): Promise<string> {
  const { bearerOf } = await import('../../src/daemon/services/mcp/credentials.js');
  const { mcpStore } = await import('../../src/daemon/services/mcp/store.js');
  return bearerOf(d.db, mcpStore.byName(d.db, project, name)!);
}
