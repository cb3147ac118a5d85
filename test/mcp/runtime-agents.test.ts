import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentHarnessCommand, resolvePython, type AgentFramework } from '../../src/daemon/runtimes/index.js';
import { BEARER, INSTANCE_SECRET, freePort, removeDir, serve, versionDir, type Served } from './runtime-helpers.js';

/**
 * Agents see the project's MCP servers through MCP_SERVERS: the harness hands them to the
 * framework's own MCP client when it is installed, and platform_mcp_client (stdlib) always works.
 * The frameworks cannot be installed here: the agents' framework doubles (test/shims/fixtures/
 * fake-frameworks) plus doubles of the frameworks' MCP clients (fixtures/fake-mcp, which talk
 * real HTTP with the url and headers they are given). The MCP server is the real runtime behind
 * a small proxy that adds the instance secret, as the daemon does.
 */
const PYTHON = await resolvePython();
let runtimeDir: string;
let runtime: Served;
let proxy: Server;
let servers: string;
let fakes: string;

beforeAll(async () => {
  runtimeDir = await versionDir({
    add: `@tool\ndef add(a: int, b: int = 1) -> int:\n    return a + b\n`,
    echo: `@tool\ndef echo(text: str):\n    return text\n`,
  });
  runtime = await serve(runtimeDir);
  proxy = createServer((req, res) => {
    const up = request(
      // A fresh upstream connection per request: reusing one the runtime has just closed fails with
      // "socket hang up" (seen under load in CI), and the agent's MCP call then waits forever.
      { host: '127.0.0.1', port: runtime.port, path: req.url!.replace(/^\/mcp\/p1\/calc/, ''), method: req.method, headers: { ...req.headers, 'x-platform-instance-secret': INSTANCE_SECRET }, agent: false },
      (r) => {
        res.writeHead(r.statusCode!, r.headers);
        r.pipe(res);
      },
    );
    up.on('error', (e) => (res.headersSent ? res.destroy(e) : res.writeHead(502).end(String(e))));
    req.pipe(up);
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(proxy.address() as { port: number }).port}/mcp/p1/calc`;
  servers = JSON.stringify([{ name: 'calc', url, bearer: BEARER }]);
  fakes = mkdtempSync(join(tmpdir(), 'fake-fw-'));
  cpSync(join(import.meta.dirname, '..', 'shims', 'fixtures', 'fake-frameworks'), fakes, { recursive: true });
  cpSync(join(import.meta.dirname, 'fixtures', 'fake-mcp'), fakes, { recursive: true });
});
afterAll(async () => {
  await runtime?.stop();
  proxy?.close();
  removeDir(runtimeDir);
  removeDir(fakes);
});

/** Prepares an agent source and runs the harness; resolves once it answers /healthz. */
async function startAgent(framework: AgentFramework, files: Record<string, string>, env: Record<string, string>) {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-agent-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  const cmd = agentHarnessCommand(framework, dir, { python: PYTHON });
  await cmd.prepare!(dir);
  const port = await freePort();
  const child = spawn(cmd.start.cmd, cmd.start.args, {
    cwd: cmd.start.cwd,
    env: { PATH: process.env.PATH!, ...cmd.start.env, PYTHONPATH: fakes, PORT: String(port), PLATFORM_INSTANCE_SECRET: 'agent-secret', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (b) => (out += b));
  child.stderr!.on('data', (b) => (out += b));
  const exited = new Promise((r) => child.once('exit', r));
  const url = `http://127.0.0.1:${port}`;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`harness exited ${child.exitCode}: ${out}`);
    // Bounded: the port was free when picked, but a probe that reaches something else must not hang the test.
    const ok = await fetch(`${url}/healthz`, { headers: { 'x-platform-instance-secret': 'agent-secret' }, signal: AbortSignal.timeout(2000) }).then((r) => r.status === 200, () => false);
    if (ok) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  return {
    output: () => out,
    invoke: async (message: string) => {
      const r = await fetch(`${url}/invoke`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-platform-instance-secret': 'agent-secret' }, body: JSON.stringify({ message }) });
      return { status: r.status, body: (await r.json()) as any };
    },
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
      removeDir(dir);
    },
  };
}

const ADK_AGENT = `
import asyncio
from google.adk.agents import Agent
import platform_mcp_client as mcp


def use_mcp(number: str) -> dict:
    """Calls the project's MCP server with no extra package, and lists it through the attached toolset."""
    toolsets = [t for t in root_agent.tools if type(t).__name__ == "McpToolset"]
    listed = [tool.name for ts in toolsets for tool in asyncio.run(ts.get_tools())]
    return {"sum": mcp.call_tool_text("calc", "add", {"a": int(number)}), "listed": listed, "servers": [s["name"] for s in mcp.servers()]}


root_agent = Agent(name="calc_agent", model="m", tools=[use_mcp])
`;

const CREW = `
from crewai import Agent, Crew, Task


class ToolReportingCrew(Crew):
    def kickoff(self, inputs=None):
        return "tools: " + ",".join(t if isinstance(t, str) else t.name for a in self.agents for t in a.tools)


researcher = Agent(role="Researcher", tools=["search"])
crew = ToolReportingCrew(agents=[researcher], tasks=[Task(description="{message}", agent=researcher)])
`;

describe('MCP_SERVERS in agents', () => {
  it('adk: McpToolset per server appended to root_agent.tools; platform_mcp_client calls a tool', async () => {
    const a = await startAgent('adk', { 'agent.py': ADK_AGENT }, { MCP_SERVERS: servers });
    try {
      const r = await a.invoke('add 41');
      expect(r.status).toBe(200);
      const result = r.body.events.find((e: { type: string }) => e.type === 'tool_result');
      expect(JSON.parse(result.summary)).toEqual({ sum: '42', listed: ['add', 'echo'], servers: ['calc'] });
      expect(a.output()).toContain('agent harness: MCP servers attached to root_agent as McpToolset: calc');
      expect(a.output()).not.toContain(BEARER);
    } finally {
      await a.stop();
    }
  });

  it("crewai: MCPServerAdapter's tools join every crew agent's tools", async () => {
    const a = await startAgent('crewai', { 'crew.py': CREW }, { MCP_SERVERS: servers });
    try {
      expect((await a.invoke('hi')).body.output).toBe('tools: search,add,echo');
    } finally {
      await a.stop();
    }
  });

  it('without MCP_SERVERS, or with PLATFORM_MCP_ATTACH=0, nothing is attached', async () => {
    for (const env of [{}, { MCP_SERVERS: servers, PLATFORM_MCP_ATTACH: '0' }] as Array<Record<string, string>>) {
      const a = await startAgent('crewai', { 'crew.py': CREW }, env);
      try {
        expect((await a.invoke('hi')).body.output).toBe('tools: search');
        expect(a.output()).not.toContain('MCP servers');
      } finally {
        await a.stop();
      }
    }
  });

  it('an unreachable server does not keep the agent down; the log says why', async () => {
    const down = JSON.stringify([{ name: 'gone', url: `http://127.0.0.1:${await freePort()}/mcp/p1/gone`, bearer: BEARER }]);
    const a = await startAgent('crewai', { 'crew.py': CREW }, { MCP_SERVERS: down });
    try {
      expect((await a.invoke('hi')).body.output).toBe('tools: search');
      expect(a.output()).toMatch(/agent harness: MCP servers gone not attached: \w+Error/);
    } finally {
      await a.stop();
    }
  });
});
