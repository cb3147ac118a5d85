/**
 * The agent harness as a real process: the build-time check (a missing framework names what to
 * add to requirements.txt) and the invoke contract for each framework. The frameworks cannot be
 * installed here (no PyPI), so serving runs against TEST DOUBLES OF THE FRAMEWORKS in
 * fixtures/fake-frameworks (see its README); the harness and the sample agents are unchanged.
 */
import { execFile } from 'node:child_process';
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentHarnessCommand, resolvePython, runtimeAvailable, type AgentFramework, type CommandSpec } from '../../src/daemon/runtimes/index.js';
import { FIXTURES, startWorkload, tempDir, type RunningWorkload } from './helpers.js';

const FAKES = join(FIXTURES, 'fake-frameworks');
const python = await runtimeAvailable('python');
if (!python.ok) console.warn(`SKIPPING agent harness tests: ${python.reason}`);

// The interpreter itself, not a version manager's shim, as the daemon would pass it.
const PYTHON = { python: await resolvePython() };

const SAMPLES: Record<AgentFramework, string> = { adk: 'agent-adk', langgraph: 'agent-langgraph', crewai: 'agent-crewai' };
const PACKAGES: Record<AgentFramework, { module: string; pkg: string }> = {
  adk: { module: 'google.adk', pkg: 'google-adk' },
  langgraph: { module: 'langgraph', pkg: 'langgraph' },
  crewai: { module: 'crewai', pkg: 'crewai' },
};

function run(spec: CommandSpec, env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(spec.cmd, spec.args, { cwd: spec.cwd, env: { ...process.env, ...spec.env, ...env } }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

/** Copies a sample into a fresh dir, prepares it and runs the build (check) step. */
async function checkSample(sample: string, framework: AgentFramework, env: Record<string, string> = {}) {
  const dir = tempDir('harness-');
  cpSync(join(FIXTURES, sample), dir.path, { recursive: true });
  const cmd = agentHarnessCommand(framework, dir.path, PYTHON);
  await cmd.prepare!(dir.path);
  const result = await run(cmd.build!, env);
  dir.remove();
  return result;
}

/** Which framework modules this machine really has (one interpreter start for all three). */
const INSTALLED: Set<string> = await (async () => {
  const modules = Object.values(PACKAGES).map((p) => p.module);
  const code = `import importlib.util, json\ndef has(m):\n    try:\n        return importlib.util.find_spec(m) is not None\n    except ImportError:\n        return False\nprint(json.dumps([m for m in ${JSON.stringify(modules)} if has(m)]))`;
  const r = await run({ cmd: PYTHON.python, args: ['-c', code] });
  return new Set<string>(r.code === 0 ? JSON.parse(r.stdout) : []);
})();

async function post(w: RunningWorkload, path: string, body: unknown) {
  const res = await fetch(`${w.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...w.headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- asserted field by field below
  return { status: res.status, body: (await res.json()) as any };
}

describe.skipIf(!python.ok)('agent harness: build-time check', () => {
  for (const framework of ['adk', 'langgraph', 'crewai'] as const) {
    const { module, pkg } = PACKAGES[framework];
    it(`${framework}: a missing framework fails the build naming what to add to requirements.txt`, async (ctx) => {
      if (INSTALLED.has(module)) {
        console.warn(`SKIPPING: ${module} is installed on this machine, so it cannot be missing`);
        ctx.skip();
      }
      const r = await checkSample(SAMPLES[framework], framework);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain(`add a line "${pkg}" to requirements.txt`);
      expect(r.stderr).toContain(`framework ${framework} needs the Python package "${pkg}"`);
    });

    it(`${framework}: with the framework present the sample passes the check`, async () => {
      const r = await checkSample(SAMPLES[framework], framework, { PYTHONPATH: FAKES });
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
    });
  }

  it('an entry file without the entry object fails, naming it (without running the code)', async () => {
    const r = await checkSample('agent-adk-broken', 'adk', { PYTHONPATH: FAKES });
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe('adk agent: agent.py does not define root_agent at module level');
  });

  it('a source without the entry file fails, naming the files looked for', async () => {
    const r = await checkSample('agent-crewai', 'langgraph', { PYTHONPATH: FAKES });
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe('langgraph agent: no agent.py or graph.py in the source; it must define graph');
  });

  it('a syntax error is reported with its line', async () => {
    const dir = tempDir('harness-');
    cpSync(join(FIXTURES, 'agent-crewai'), dir.path, { recursive: true });
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(dir.path, 'crew.py'), 'crew = (\n');
    const cmd = agentHarnessCommand('crewai', dir.path, PYTHON);
    await cmd.prepare!(dir.path);
    const r = await run(cmd.build!, { PYTHONPATH: FAKES });
    dir.remove();
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^crew\.py: syntax error at line \d+/);
  });

  it('serving without the framework (build skipped) exits with the same message', async () => {
    const start = startWorkload('agent-adk', (dir) => agentHarnessCommand('adk', dir, PYTHON), {}, { skipBuild: true });
    await expect(start).rejects.toThrow(/workload exited with 1:\n.*add a line "google-adk" to requirements.txt/);
  });
});

interface Expectation {
  output: (message: string, turn: number) => string;
  reasoning: (message: string) => string;
  toolCalls: (message: string) => Array<{ name: string; summary: string }>;
  eventTypes: string[];
}

const EXPECT: Record<AgentFramework, Expectation> = {
  adk: {
    output: (m, n) => `Answer ${n}: ${m}`,
    reasoning: (m) => `user asked: ${m}`,
    toolCalls: (m) => [{ name: 'get_weather', summary: JSON.stringify({ city: m.split(' ').at(-1) }).replace(':', ': ') }],
    eventTypes: ['reasoning', 'tool_call', 'tool_result', 'message'],
  },
  langgraph: {
    output: (m, n) => `Turn ${n}: facts about ${m}`,
    reasoning: () => 'combining the tool result',
    toolCalls: (m) => [{ name: 'lookup', summary: JSON.stringify({ q: m }).replace(':', ': ') }],
    eventTypes: ['tool_call', 'tool_result', 'reasoning', 'message'],
  },
  crewai: {
    output: (m) => `Researcher answered: Answer: ${m}`,
    reasoning: () => 'I should search',
    toolCalls: (m) => [{ name: 'search', summary: JSON.stringify({ query: `Answer: ${m}` }).replace(':', ': ') }],
    eventTypes: ['reasoning', 'tool_call', 'tool_result', 'message'],
  },
};

for (const framework of ['adk', 'langgraph', 'crewai'] as const) {
  describe.skipIf(!python.ok)(`agent harness serving ${framework} (framework test double on PYTHONPATH)`, () => {
    let w: RunningWorkload;
    const want = EXPECT[framework];
    beforeAll(async () => {
      w = await startWorkload(SAMPLES[framework], (dir) => agentHarnessCommand(framework, dir, PYTHON), { PYTHONPATH: FAKES, AGENT_NAME: 'sample' });
    });
    afterAll(async () => {
      await w?.stop();
    });

    it('POST /invoke answers with every field of the invoke contract', async () => {
      const res = await post(w, '/invoke', { message: 'weather in paris', session_id: `s-${framework}-1`, user_id: 'u1', memorize: false });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['events', 'output', 'reasoning', 'session_id', 'tool_calls', 'user_id']);
      expect(res.body.session_id).toBe(`s-${framework}-1`);
      expect(res.body.user_id).toBe('u1');
      expect(res.body.output).toBe(want.output('weather in paris', 1));
      expect(res.body.reasoning).toBe(want.reasoning('weather in paris'));
      expect(res.body.tool_calls).toEqual(want.toolCalls('weather in paris'));
      expect(res.body.events.map((e: { type: string }) => e.type)).toEqual(want.eventTypes);
    });

    if (framework !== 'crewai') {
      it('the same session_id continues the conversation', async () => {
        const res = await post(w, '/invoke', { message: 'and in rome', session_id: `s-${framework}-1`, user_id: 'u1' });
        expect(res.status).toBe(200);
        expect(res.body.output).toBe(want.output('and in rome', 2));
      });
    }

    it('without session_id and user_id the harness picks them', async () => {
      const res = await post(w, '/invoke', { message: 'hello there' });
      expect(res.status).toBe(200);
      expect(res.body.session_id).toMatch(/^[0-9a-f]{32}$/);
      expect(res.body.user_id).toBe('anonymous');
      expect(res.body.output).toBe(want.output('hello there', 1));
    });

    it('POST /invoke/stream sends NDJSON: each event, then done with the invoke fields', async () => {
      const res = await fetch(`${w.url}/invoke/stream`, { method: 'POST', headers: w.headers, body: JSON.stringify({ message: 'weather in lyon', session_id: `s-${framework}-2` }) });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/x-ndjson');
      const lines = (await res.text()).trim().split('\n').map((l) => JSON.parse(l));
      expect(lines.slice(0, -1).map((e) => e.type)).toEqual(want.eventTypes);
      const done = lines.at(-1);
      expect(done).toEqual({
        type: 'done',
        session_id: `s-${framework}-2`,
        user_id: 'anonymous',
        output: want.output('weather in lyon', 1),
        reasoning: want.reasoning('weather in lyon'),
        tool_calls: want.toolCalls('weather in lyon'),
      });
    });

    it('an agent failure is a 500 with agent raised, and an error line when streaming', async () => {
      const res = await post(w, '/invoke', { message: 'explode' });
      expect(res.status).toBe(500);
      expect(res.body.error).toMatch(/^agent raised RuntimeError: /);
      const stream = await fetch(`${w.url}/invoke/stream`, { method: 'POST', headers: w.headers, body: JSON.stringify({ message: 'explode' }) });
      const lines = (await stream.text()).trim().split('\n').map((l) => JSON.parse(l));
      expect(lines.at(-1)).toEqual({ type: 'error', error: res.body.error });
    });

    it('refuses bad requests: not JSON, no message, a non-string id, over 1 MiB', async () => {
      expect((await post(w, '/invoke', 'not json')).body.error).toMatch(/^invalid JSON body/);
      const missing = await post(w, '/invoke', { session_id: 'x' });
      expect(missing).toEqual({ status: 400, body: { error: 'message is required (a non-empty string)' } });
      expect(await post(w, '/invoke', { message: 'hi', user_id: 7 })).toEqual({ status: 400, body: { error: 'user_id must be a string' } });
      const big = await post(w, '/invoke', { message: 'x'.repeat(1024 * 1024) });
      expect(big).toEqual({ status: 413, body: { error: 'body exceeds 1048576 bytes' } });
      expect((await fetch(`${w.url}/elsewhere`, { headers: w.headers })).status).toBe(404);
    });

    it('answers nothing but 403 to a request without the instance secret, whatever the path', async () => {
      for (const path of ['/invoke', '/invoke/stream']) {
        const res = await fetch(`${w.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message: 'weather in lyon' }) });
        expect(res.status).toBe(403);
        expect(await res.json()).toEqual({ error: 'forbidden: this address answers only requests routed by the platform' });
      }
      expect((await fetch(`${w.url}/healthz`)).status).toBe(403);
    });
  });
}

describe.skipIf(!python.ok)('agent harness: loading and streaming details', () => {
  it('an ADK agent folder with __init__.py and relative imports loads as a package', async () => {
    const w = await startWorkload('agent-adk-pkg', (dir) => agentHarnessCommand('adk', dir, PYTHON), { PYTHONPATH: FAKES });
    try {
      const res = await post(w, '/invoke', { message: 'find widgets' });
      expect(res.status).toBe(200);
      expect(res.body.tool_calls).toEqual([{ name: 'lookup', summary: '{"term": "widgets"}' }]);
      expect(res.body.events[2].summary).toBe('{"term": "widgets", "found": true}');
    } finally {
      await w.stop();
    }
  });

  it('crewai: crew may be a function returning a Crew; inputs carry message and user_id', async () => {
    const w = await startWorkload('agent-crewai-factory', (dir) => agentHarnessCommand('crewai', dir, PYTHON), { PYTHONPATH: FAKES });
    try {
      const res = await post(w, '/invoke', { message: 'tides', user_id: 'ana' });
      expect(res.status).toBe(200);
      expect(res.body.output).toBe('Writer answered: Write about tides for ana');
    } finally {
      await w.stop();
    }
  });

  it('langgraph: an uncompiled StateGraph in graph.py is compiled with a checkpointer keyed by session_id', async () => {
    const w = await startWorkload('agent-langgraph-builder', (dir) => agentHarnessCommand('langgraph', dir, PYTHON), { PYTHONPATH: FAKES });
    try {
      expect((await post(w, '/invoke', { message: 'a', session_id: 'thread-1' })).body.output).toBe('reply 1');
      expect((await post(w, '/invoke', { message: 'b', session_id: 'thread-1' })).body.output).toBe('reply 2');
      expect((await post(w, '/invoke', { message: 'c', session_id: 'thread-2' })).body.output).toBe('reply 1');
    } finally {
      await w.stop();
    }
  });

  it('stream lines leave as they are produced, not when the turn ends', async () => {
    const w = await startWorkload('agent-adk', (dir) => agentHarnessCommand('adk', dir, PYTHON), { PYTHONPATH: FAKES });
    try {
      // The sample tool sleeps 400 ms for slowtown: the lines before it must arrive first.
      const started = Date.now();
      const res = await fetch(`${w.url}/invoke/stream`, { method: 'POST', headers: w.headers, body: JSON.stringify({ message: 'weather in slowtown' }) });
      const reader = res.body!.getReader();
      const first = await reader.read();
      const firstAt = Date.now() - started;
      let rest = '';
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        rest += new TextDecoder().decode(value);
      }
      const doneAt = Date.now() - started;
      expect(JSON.parse(new TextDecoder().decode(first.value).split('\n')[0]!).type).toBe('reasoning');
      expect(doneAt - firstAt).toBeGreaterThanOrEqual(300);
      expect(rest.trim().split('\n').at(-1)).toContain('"type":"done"');
    } finally {
      await w.stop();
    }
  });
});
