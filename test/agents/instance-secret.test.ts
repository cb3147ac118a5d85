import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { runtimeAvailable, type Runtime } from '../../src/daemon/runtimes/index.js';
import { ADMIN_PASSWORD, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { archive, deployForm, langgraphSample, waitState, type Entry, useAgentDaemon } from './helpers.js';

/**
 * Issue 16 §1: an instance answers only requests that came through the daemon. Each workload
 * below reports what its own code can see (the secret variable in its environment and in
 * /proc/self/environ) and, given another instance's port, what a direct request to it gets.
 */

const FORBIDDEN = { error: 'forbidden: this address answers only requests routed by the platform' };
const VAR = 'PLATFORM_INSTANCE_SECRET';

// Every probe answers {env: [names holding the secret variable], proc: [non-empty values of it in
// /proc/self/environ], direct: [status, body] of a POST to 127.0.0.1:<port> when given one}.
const PYTHON_PROBE = `import json, os, urllib.error, urllib.request

def report(message):
    entries = open("/proc/self/environ", "rb").read().split(b"\\0")
    out = {
        "env": sorted(k for k in os.environ if "${VAR}" in k),
        "proc": [e.decode() for e in entries if e.startswith(b"${VAR}=") and len(e) > len(b"${VAR}=")],
    }
    port = message.split(":", 1)[1] if ":" in message else ""
    if port:
        req = urllib.request.Request("http://127.0.0.1:%s/" % port, data=b'{"message":"direct"}', headers={"content-type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                out["direct"] = [r.status, r.read().decode()]
        except urllib.error.HTTPError as e:
            out["direct"] = [e.code, e.read().decode()]
    return out
`;

const SOURCES: Record<Runtime, Record<string, string>> = {
  python: {
    'main.py': `${PYTHON_PROBE}

def handle(event):
    message = event.get("message") or ""
    if message == "dump":
        return {"environ": dict(os.environ), "proc": open("/proc/self/environ", "rb").read().decode("latin-1")}
    return report(message) if message.startswith("probe") else {"reply": "hello " + message}
`,
  },
  nodejs: {
    'index.mjs': `import { readFileSync } from 'node:fs';
export async function handle(event) {
  const message = event.message ?? '';
  if (!message.startsWith('probe')) return { reply: 'hello ' + message };
  const entries = readFileSync('/proc/self/environ').toString('latin1').split('\\0');
  const out = {
    env: Object.keys(process.env).filter((k) => k.includes('${VAR}')),
    proc: entries.filter((e) => e.startsWith('${VAR}=') && e.length > '${VAR}='.length),
  };
  const port = message.split(':')[1];
  if (port) {
    const r = await fetch('http://127.0.0.1:' + port + '/', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"message":"direct"}' });
    out.direct = [r.status, await r.text()];
  }
  return out;
}
`,
  },
  go: {
    'handler.go': `package main

import (
	"io"
	"net/http"
	"os"
	"strings"
)

func Handle(event map[string]interface{}) (map[string]interface{}, error) {
	message, _ := event["message"].(string)
	if !strings.HasPrefix(message, "probe") {
		return map[string]interface{}{"reply": "hello " + message}, nil
	}
	env := []string{}
	for _, kv := range os.Environ() {
		if strings.Contains(strings.SplitN(kv, "=", 2)[0], "${VAR}") {
			env = append(env, kv)
		}
	}
	proc := []string{}
	block, _ := os.ReadFile("/proc/self/environ")
	for _, e := range strings.Split(string(block), "\\x00") {
		if strings.HasPrefix(e, "${VAR}=") && len(e) > len("${VAR}=") {
			proc = append(proc, e)
		}
	}
	out := map[string]interface{}{"env": env, "proc": proc}
	if parts := strings.SplitN(message, ":", 2); len(parts) == 2 {
		res, err := http.Post("http://127.0.0.1:"+parts[1]+"/", "application/json", strings.NewReader("{\\"message\\":\\"direct\\"}"))
		if err != nil {
			return nil, err
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		out["direct"] = []interface{}{res.StatusCode, string(body)}
	}
	return out, nil
}
`,
  },
  ruby: {
    'handler.rb': `require 'net/http'

def handle(event)
  message = event['message'] || ''
  return { 'reply' => "hello #{message}" } unless message.start_with?('probe')
  entries = File.binread('/proc/self/environ').split("\\0")
  out = {
    'env' => ENV.keys.select { |k| k.include?('${VAR}') },
    'proc' => entries.select { |e| e.start_with?('${VAR}=') && e.bytesize > '${VAR}='.bytesize }
  }
  _, port = message.split(':', 2)
  if port
    res = Net::HTTP.post(URI("http://127.0.0.1:#{port}/"), '{"message":"direct"}', 'Content-Type' => 'application/json')
    out['direct'] = [res.code.to_i, res.body]
  end
  out
end
`,
  },
};

/** A LangGraph agent (the shims' stand-in package vendored) whose one node runs the probe. */
function agentSource(): Entry[] {
  const fake = langgraphSample().filter((e) => e.name.startsWith('langgraph/'));
  const agent = `${PYTHON_PROBE}
from langgraph.graph import END, START, MessagesState, StateGraph


def probe(state):
    return {"messages": [{"role": "assistant", "content": json.dumps(report(state["messages"][-1]["content"]))}]}


builder = StateGraph(MessagesState)
builder.add_node("probe", probe)
builder.add_edge(START, "probe")
builder.add_edge("probe", END)
graph = builder.compile()
`;
  return [...fake, { name: 'agent.py', content: agent }];
}

const RUNTIMES: Runtime[] = ['python', 'nodejs', 'go', 'ruby'];
const available = Object.fromEntries(await Promise.all(RUNTIMES.map(async (r) => [r, await runtimeAvailable(r)] as const)));

let d: TestDaemon;
let token: string;
useAgentDaemon((daemon, adminToken) => {
  d = daemon;
  token = adminToken;
});

/** The port of the workload's serving instance, as the daemon recorded it. */
function instancePort(name: string): number {
  const rows = d.db
    .prepare('SELECT i.port FROM agents_instances i JOIN agents_agents a ON a.id = i.agent_id WHERE a.name = ?')
    .all(name) as Array<{ port: number }>;
  expect(rows).toHaveLength(1);
  return rows[0]!.port;
}

async function invoke(name: string, message: string): Promise<any> {
  const r = await d.api('POST', `/v1/agents/${name}/invoke`, { body: { message } });
  expect(r.status, r.text).toBe(200);
  return r.body;
}

/** A direct request to an instance port, with no secret, a guessed one, or via each method. */
async function expectRefused(port: number): Promise<void> {
  const attempts: Array<[string, RequestInit]> = [
    ['/', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"message":"direct"}' }],
    ['/invoke', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"message":"direct"}' }],
    ['/', { method: 'POST', headers: { 'content-type': 'application/json', 'x-platform-instance-secret': 'A'.repeat(43) }, body: '{"message":"direct"}' }],
    ['/', { method: 'GET' }],
    ['/healthz', { method: 'GET' }],
  ];
  for (const [path, init] of attempts) {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, init);
    expect(res.status, path).toBe(403);
    expect(await res.json()).toEqual(FORBIDDEN);
  }
}

const deployed: string[] = [];

describe('a function instance answers only requests routed by the daemon', () => {
  for (const runtime of RUNTIMES) {
    it.skipIf(!available[runtime]!.ok)(`${runtime}: invoke works, a direct request gets 403, the handler cannot see the secret`, { timeout: 120_000 }, async () => {
      const name = `sec-${runtime}`;
      const r = await deployForm(d, token, { name, framework: 'function', runtime }, archive(SOURCES[runtime]));
      expect(r.status, JSON.stringify(r.body)).toBe(202);
      await waitState(d, token, name, 'ready', '', 90_000);
      expect(await invoke(name, 'there')).toMatchObject({ reply: 'hello there' });
      const seen = await invoke(name, 'probe');
      expect(seen).toMatchObject({ env: [], proc: [] });
      await expectRefused(instancePort(name));
      // The handler's log never saw a refused request.
      const hist = await d.api('GET', `/v1/agents/${name}/logs/history`, { token });
      expect(JSON.stringify(hist.body)).not.toContain('direct');
      deployed.push(name);
    });
  }

  it('no key material reaches a workload’s environment: signing key, master key, admin password', async () => {
    const seen = JSON.stringify(await invoke('sec-python', 'dump'));
    expect(seen).toContain('SVC_PROJECT_KEY'); // the dump is real: the workload's own key is there
    const keys = readdirSync(join(d.home, 'keys'));
    expect(keys).toEqual(expect.arrayContaining(['signing.key']));
    for (const k of keys) {
      const content = readFileSync(join(d.home, 'keys', k), 'utf8').trim();
      expect(content.length).toBeGreaterThan(16);
      expect(seen, k).not.toContain(content);
    }
    expect(seen).not.toContain(ADMIN_PASSWORD);
  });

  it('one function calling another instance’s port directly gets 403 and no output', { timeout: 60_000 }, async () => {
    expect(deployed.length).toBeGreaterThanOrEqual(2);
    for (let i = 0; i < deployed.length; i++) {
      const from = deployed[i]!;
      const to = deployed[(i + 1) % deployed.length]!;
      await invoke(to, 'warm'); // the target is serving, so its port is live
      const seen = await invoke(from, `probe:${instancePort(to)}`);
      expect(seen.direct, `${from} -> ${to}`).toEqual([403, JSON.stringify(FORBIDDEN)]);
    }
  });

  it('a client-sent secret header is dropped on the public address; the daemon’s own is used', async () => {
    const name = deployed[0]!;
    const project = (await d.api('GET', '/v1/projects', { token })).body.projects[0].short;
    // fetch may not set Host; undici's request does.
    const res = await request(`${d.url}/`, {
      method: 'POST',
      headers: { host: `${name}-${project}.apps.localhost`, 'content-type': 'application/json', 'x-platform-instance-secret': 'forged' },
      body: JSON.stringify({ message: 'public' }),
    });
    expect(res.statusCode).toBe(200);
    expect(await res.body.json()).toMatchObject({ reply: 'hello public' });
  });
});

describe('the agent harness answers only requests routed by the daemon', () => {
  it('invoke and streaming invoke work, a direct request gets 403, the agent cannot see the secret', { timeout: 120_000 }, async () => {
    const r = await deployForm(d, token, { name: 'sec-agent', framework: 'langgraph' }, archive(agentSource()));
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    await waitState(d, token, 'sec-agent', 'ready', '', 90_000);
    const target = deployed[0]!;
    await invoke(target, 'warm');
    const out = await invoke('sec-agent', `probe:${instancePort(target)}`);
    const seen = JSON.parse(out.output);
    expect(seen).toMatchObject({ env: [], proc: [], direct: [403, JSON.stringify(FORBIDDEN)] });
    const stream = await d.api('POST', '/v1/agents/sec-agent/invoke/stream', { body: { message: 'probe' } });
    expect(stream.status).toBe(200);
    expect(stream.text).toContain('"type":"done"');
    await expectRefused(instancePort('sec-agent'));
  });
});
