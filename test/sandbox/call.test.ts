import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestDaemon } from '../helpers/daemon.js';
import { archive, deployForm, fakeFrameworks, langgraphSample, waitState } from '../agents/helpers.js';
import { sbx, startSandboxDaemon } from './helpers.js';

/**
 * /v1/call against a deployed agent (spec 2 §4.6) and the agent harness's run_python tool, in
 * process mode. The agent is the LangGraph sample with the shims' stand-in framework; its graph
 * hands the user's message to run_python, and tools.py holds the functions /v1/call runs.
 */
const AGENT_PY = `import os
from langgraph.graph import END, START, MessagesState, StateGraph
from platform_sandbox import run_python

SECRET_MARK = os.environ.get("MODEL_API_KEY", "")


def code(state):
    return {"messages": [{"role": "assistant", "content": run_python(state["messages"][-1]["content"])}]}


def add(a, b=0):
    return {"sum": a + b, "cwd": os.getcwd()}


def env_names():
    return sorted(os.environ)


def boom(why="bad"):
    raise ValueError(why)


def nothing():
    return None


def big():
    return "x" * (9 * 1024 * 1024)


def not_json():
    return object()


def chatty():
    print("noise on stdout", flush=True)
    return 7


def garble():
    # Writes garbage on every descriptor past stderr: one of them is the runner's reply pipe.
    for fd in range(3, 20):
        try:
            os.write(fd, b"not json at all\\n")
        except OSError:
            pass
    return 1


def slow():
    import time
    time.sleep(30)


builder = StateGraph(MessagesState)
builder.add_node("code", code)
builder.add_edge(START, "code")
builder.add_edge("code", END)
graph = builder.compile()
`;

let d: TestDaemon;
let image: string;
beforeAll(async () => {
  // A short ready wait (the spec's is 110 s) so the not-ready 503 can be seen within the test.
  d = await startSandboxDaemon({ mode: 'process', poolTarget: 1, callReadyMs: 4000 });
  const token = await d.adminToken();
  const files = langgraphSample().filter((e) => e.name !== 'agent.py');
  const r = await deployForm(d, token, { name: 'coder', framework: 'langgraph' }, archive([...files, { name: 'agent.py', content: AGENT_PY }, { name: 'broken.py', content: 'import not_a_module\n' }, { name: 'sleepy.py', content: 'import time\ntime.sleep(60)\n\ndef f():\n    return 1\n' }]));
  expect(r.status).toBe(202);
  await d.api('PATCH', '/v1/agents/coder/secrets', { token, body: { set: { MODEL_API_KEY: 'sk-agent-credential' } } });
  const agent = await waitState(d, token, 'coder', 'ready', '', 60_000);
  image = agent.image;
  expect(image).toMatch(/^local\//);
}, 90_000);
afterAll(() => d?.close());

const call = (body: Record<string, unknown>) => sbx(d, 'POST', '/v1/call', body);

describe('/v1/call (process mode)', () => {
  it('runs one function of the agent with keyword arguments and returns its JSON result', async () => {
    const r = await call({ image, function: 'add', args: { a: 2, b: 40 } });
    expect(r.status).toBe(200);
    expect(r.body.result.sum).toBe(42);
    expect(r.body.sandbox_id).toMatch(/^sbx-/);
    expect(Number.isInteger(r.body.duration_ms)).toBe(true);
    expect('error' in r.body).toBe(false);
    console.log(`tool call round trip: ${r.ms.toFixed(0)} ms`);
  });

  it('carries none of the agent credentials', async () => {
    const r = await call({ image, function: 'env_names', module: 'agent' });
    expect(r.status).toBe(200);
    expect(r.body.result).not.toContain('MODEL_API_KEY');
    expect(r.body.result).not.toContain('SVC_PROJECT_KEY');
    expect(r.body.result).not.toContain('SANDBOX_URL');
  });

  it('error only when the function raised; None omits result; prints cannot forge a reply', async () => {
    const raised = await call({ image, function: 'boom', args: { why: 'no luck' } });
    expect(raised.status).toBe(200);
    expect(raised.body.error).toBe('ValueError: no luck');
    expect('result' in raised.body).toBe(false);
    const none = await call({ image, function: 'nothing' });
    expect(none.status).toBe(200);
    expect(Object.keys(none.body).sort()).toEqual(['duration_ms', 'sandbox_id']);
    expect((await call({ image, function: 'chatty' })).body.result).toBe(7);
  });

  it('502: tool execution failed, reply over 8 MiB, result not JSON, bad module or function, deadline', async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ image, function: 'big' }, /invalid tool runner reply: larger than 8 MiB/],
      [{ image, function: 'garble' }, /invalid tool runner reply: not JSON/],
      [{ image, function: 'not_json' }, /tool execution failed: the result is not JSON/],
      [{ image, function: 'missing' }, /tool execution failed: module agent has no function missing/],
      [{ image, function: 'f', module: 'broken' }, /tool execution failed: could not import module broken: ModuleNotFoundError/],
      [{ image, function: 'add', args: { c: 1 } }, /^ValueError|TypeError/],
      [{ image, function: 'slow', timeout_s: 1 }, /tool execution failed: timed out after 1s/],
    ];
    for (const [body, want] of cases) {
      const r = await call(body);
      if (body.function === 'add') {
        // A wrong keyword is the function raising (TypeError), not a runner failure.
        expect(r.status).toBe(200);
        expect(r.body.error).toMatch(/TypeError/);
        continue;
      }
      expect(r.status, JSON.stringify(body)).toBe(502);
      expect(r.body.error).toMatch(want);
    }
  });

  it('400: image and function required, timeout_s 1 to 120, body at most 1 MiB; 503 for an unknown image', async () => {
    expect((await call({ function: 'add' })).body.error).toBe('missing required field: image');
    expect((await call({ image })).body.error).toBe('missing required field: function');
    const t = await call({ image, function: 'add', timeout_s: 121 });
    expect(t.status).toBe(400);
    expect(t.body.error).toMatch(/timeout_s/);
    const huge = await call({ image, function: 'add', args: { a: 'x'.repeat(1024 * 1024) } });
    expect(huge.status).toBe(413);
    const unknown = await call({ image: 'local/nope/none@sha256:00', function: 'add' });
    expect(unknown.status).toBe(503);
    expect(unknown.body.error).toMatch(/could not start a tool sandbox: no deployed agent revision has the image/);
    expect((await sbx(d, 'GET', '/v1/call')).status).toBe(405);
  });

  it('503 when the tool sandbox does not become ready in time (its module import hangs)', async () => {
    const r = await call({ image, function: 'f', module: 'sleepy' });
    expect(r.status).toBe(503);
    expect(r.body.error).toBe('tool sandbox did not become ready within 4 seconds');
    expect(r.ms).toBeLessThan(10_000);
  });
});

describe('run_python in the agent harness', () => {
  it('the agent runs code through SANDBOX_URL and reads back a formatted result', async () => {
    const r = await d.api('POST', '/v1/agents/coder/invoke', { token: await d.adminToken(), body: { message: 'import os\nprint(6 * 7)\nprint(os.getuid())' } });
    expect(r.status).toBe(200);
    expect(r.body.output).toBe('exit_code: 0\nstdout:\n42\n65534\n\nstderr:\n');
    const failing = await d.api('POST', '/v1/agents/coder/invoke', { token: await d.adminToken(), body: { message: 'import sys\nsys.exit("nope")' } });
    expect(failing.body.output).toBe('exit_code: 1\nstdout:\n\nstderr:\nnope\n');
  });
});

describe('run_python given to an ADK agent by the harness', () => {
  it("the model's tool call runs in the sandbox (the stand-in model calls the first tool with the last word)", async () => {
    const token = await d.adminToken();
    const agentPy = 'from google.adk.agents import Agent\n\nroot_agent = Agent(name="coder", model="m", instruction="Run code.", tools=[])\n';
    expect((await deployForm(d, token, { name: 'adkcoder', framework: 'adk' }, archive([...fakeFrameworks('google/'), { name: 'agent.py', content: agentPy }]))).status).toBe(202);
    await waitState(d, token, 'adkcoder', 'ready', '', 60_000);
    // This agent has no knowledge base: with search_knowledge off, run_python is its one tool.
    expect((await d.api('PUT', '/v1/agents/adkcoder/memory/policy', { token, body: { knowledge_enabled: false } })).status).toBe(200);
    const r = await d.api('POST', '/v1/agents/adkcoder/invoke', { token, body: { message: 'please run print(6*7)' } });
    expect(r.status).toBe(200);
    expect(r.body.tool_calls[0].name).toBe('run_python');
    const result = r.body.events.find((e: any) => e.type === 'tool_result');
    expect(result.summary).toMatch(/exit_code: 0\nstdout:\n42/);
  }, 60_000);
});
