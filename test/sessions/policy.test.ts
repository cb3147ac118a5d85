import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { TestDaemon } from '../helpers/daemon.js';
import { archive, deployForm, fakeFrameworks, useAgentDaemon, waitState, type Entry } from '../agents/helpers.js';

/**
 * The memory policy's extraction and knowledge fields (issue 23, spec 1 §4.12's refused
 * MEMORY_* / KNOWLEDGE_ENABLED names): validation, what memorize keeps, the variables a workload
 * reads after a change, and search_knowledge left off an ADK agent.
 */
let d: TestDaemon;
let token: string;
useAgentDaemon((daemon, adminToken) => {
  d = daemon;
  token = adminToken;
});


const POLICY_VARS = ['MEMORY_MODE', 'MEMORY_INJECT', 'MEMORY_TTL_SECONDS', 'MEMORY_EXCLUDE_SENSITIVE', 'MEMORY_TOPICS', 'MEMORY_INSTRUCTIONS', 'KNOWLEDGE_ENABLED'];
// Instances run in their own pid namespace, so each marks itself with a random id.
const ENV_PY = `import os

KEYS = ${JSON.stringify(POLICY_VARS)}
INSTANCE = os.urandom(8).hex()


def handle(event):
    return {"output": "ok", "env": {k: os.environ.get(k) for k in KEYS}, "instance": INSTANCE}
`;
// The ADK test double calls the first tool with the message's last word: this one reports every
// tool the harness left on root_agent.
const ADK_AGENT = `from google.adk.agents import Agent


def list_tools(topic: str) -> str:
    return ",".join(getattr(t, "__name__", "?") for t in root_agent.tools)


root_agent = Agent(name="lister", model="m", instruction="Answer.", tools=[list_tools])
`;

const invoke = (name: string, body: Record<string, unknown>) => d.api('POST', `/v1/agents/${name}/invoke`, { body });
const putPolicy = (name: string, body: Record<string, unknown>) => d.api('PUT', `/v1/agents/${name}/memory/policy`, { token, body });
const sid = (tag: string) => `${tag}-${Math.random().toString(36).slice(2)}-0123456789abcdefghij`;
const memorize = (name: string, s: string) => d.api('POST', `/v1/agents/${name}/sessions/${s}/memorize`, { token });

beforeAll(async () => {
  const deploys: Array<[string, string, Entry[] | Record<string, string>]> = [
    ['envfn', 'function', { 'main.py': ENV_PY }],
    ['facts', 'function', { 'main.py': 'def handle(event):\n    return {"output": "noted"}\n' }],
    ['lister', 'adk', [{ name: 'agent.py', content: ADK_AGENT }, ...fakeFrameworks('google/')]],
  ];
  for (const [name, framework, files] of deploys) {
    const r = await deployForm(d, token, { name, framework, ...(framework === 'function' ? { runtime: 'python' } : {}) }, archive(files));
    expect(r.status, JSON.stringify(r.body)).toBe(202);
  }
  await Promise.all(deploys.map(([name]) => waitState(d, token, name, 'ready', '', 60_000)));
}, 120_000);

describe('policy fields', () => {
  it('unknown fields and values past the limits are 400 naming the field; PUT merges', async () => {
    const unknown = await putPolicy('facts', { enabled: true, colour: 'blue' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatch(/colour/);
    expect(unknown.body.request_id).toMatch(/^req_/);
    for (const [field, value] of [
      ['topics', Array.from({ length: 21 }, (_, i) => `t${i}`)],
      ['topics', ['x'.repeat(81)]],
      ['topics', ['  ']],
      ['topics', 'travel'],
      ['instructions', 'x'.repeat(2001)],
      ['exclude_sensitive', 'yes'],
      ['knowledge_enabled', 1],
    ] as const) {
      const r = await putPolicy('facts', { [field]: value });
      expect(r.status, `${field} ${JSON.stringify(value).slice(0, 40)}`).toBe(400);
      expect(r.body.error).toMatch(new RegExp(field));
    }
    const ok = await putPolicy('facts', { topics: Array.from({ length: 20 }, (_, i) => `topic ${i}`), instructions: 'x'.repeat(2000) });
    expect(ok.status, ok.text).toBe(200);
    const merged = await putPolicy('facts', { topics: [' Travel ', 'travel', 'food'], instructions: 'Keep it short.' });
    expect(merged.body.policy).toEqual({
      enabled: false,
      scope: 'user',
      retention_days: null,
      inject: 5,
      exclude_sensitive: true,
      topics: ['Travel', 'food'],
      instructions: 'Keep it short.',
      knowledge_enabled: true,
    });
    expect((await d.api('GET', '/v1/agents/facts/memory/policy', { token })).body.policy.topics).toEqual(['Travel', 'food']);
    const cleared = await putPolicy('facts', { topics: [], instructions: '' });
    expect(cleared.body.policy).toMatchObject({ topics: [], instructions: '' });
    const env = await d.api('PATCH', '/v1/agents/facts/env', { token, body: { set: { KNOWLEDGE_ENABLED: 'false' } } });
    expect(env.status).toBe(400);
    expect(env.body.error).toMatch(/KNOWLEDGE_ENABLED \(memory policy: use PUT \/v1\/agents\/\{name\}\/memory\/policy/);
  });
});

describe('what memorize keeps', () => {
  const SECRETS =
    'My name is Ada. My password is hunter2. My email is ada@example.com. My card number is 4111 1111 1111 1111. My OpenAI key is sk-abcdefghijklmnopqrstuvwx. I like green tea.';

  it('exclude_sensitive drops facts holding a secret-looking value; turned off it keeps them', async () => {
    expect((await putPolicy('facts', { enabled: true, exclude_sensitive: true, topics: [] })).status).toBe(200);
    const s = sid('sens');
    expect((await invoke('facts', { message: SECRETS, session_id: s, user_id: 'ada' })).status).toBe(200);
    const m = await memorize('facts', s);
    expect(m.status, m.text).toBe(200);
    expect(m.body.created.map((e: any) => e.fact)).toEqual(['My name is Ada.', 'I like green tea.']);
    expect(m.body).toMatchObject({ skipped_sensitive: 4, skipped_off_topic: 0, skipped_duplicates: 0 });
    const listed = await d.api('GET', '/v1/agents/facts/memory?user_id=ada', { token });
    expect(JSON.stringify(listed.body)).not.toMatch(/hunter2|ada@example|4111|sk-abc/);

    await putPolicy('facts', { exclude_sensitive: false });
    const again = await memorize('facts', s);
    expect(again.body.created.map((e: any) => e.fact)).toEqual([
      'My password is hunter2.',
      'My email is ada@example.com.',
      'My card number is 4111 1111 1111 1111.',
      'My OpenAI key is sk-abcdefghijklmnopqrstuvwx.',
    ]);
    expect(again.body).toMatchObject({ skipped_sensitive: 0, skipped_duplicates: 2 });
    await d.api('DELETE', '/v1/agents/facts/memory?user_id=ada', { token });
  });

  it('topics keep only facts sharing a word (or a word start) with a topic', async () => {
    await putPolicy('facts', { exclude_sensitive: true, topics: ['travel plans', 'food'] });
    const s = sid('topic');
    await invoke('facts', { message: 'I am travelling to Lisbon in May. My favourite food is bacalhau. My car is red. We have two cats.', session_id: s, user_id: 'tom' });
    const m = await memorize('facts', s);
    expect(m.body.created.map((e: any) => e.fact)).toEqual(['I am travelling to Lisbon in May.', 'My favourite food is bacalhau.']);
    expect(m.body).toMatchObject({ skipped_off_topic: 2, skipped_sensitive: 0 });
    await putPolicy('facts', { topics: [] });
  });

  it('with a model: the prompt carries the rules, topics and instructions; a secret in its answer is still dropped', async () => {
    const asked: any[] = [];
    const stub: Server = createServer((req, res) => {
      let raw = '';
      req.on('data', (c) => (raw += c));
      req.on('end', () => {
        asked.push(JSON.parse(raw));
        res.setHeader('content-type', 'application/json');
        const facts = ['The user is vegetarian', 'The user password is hunter2'];
        res.end(JSON.stringify({ choices: [{ message: { role: 'assistant', content: JSON.stringify({ facts }) } }] }));
      });
    });
    await new Promise<void>((r) => stub.listen(0, '127.0.0.1', r));
    try {
      const port = (stub.address() as { port: number }).port;
      const env = await d.api('PATCH', '/v1/agents/facts/env', { token, body: { set: { MODEL_BASE_URL: `http://127.0.0.1:${port}/v1`, CHAT_MODEL: 'stub' } } });
      expect(env.status).toBe(200);
      await putPolicy('facts', { topics: ['diet', 'travel'], instructions: 'Ignore small talk.' });
      const s = sid('model');
      await invoke('facts', { message: 'I never eat meat; my password is hunter2', session_id: s, user_id: 'veg' });
      const m = await memorize('facts', s);
      expect(m.status, m.text).toBe(200);
      expect(m.body).toMatchObject({ extractor: 'model', created: [{ fact: 'The user is vegetarian.' }], skipped_sensitive: 1, skipped_off_topic: 0 });
      const system = asked[0].messages[0].content as string;
      expect(system).toMatch(/^Extract durable facts about the user/);
      expect(system).toContain('Never include secrets or personal identifiers');
      expect(system).toContain('Keep only facts about these topics:\n- diet\n- travel');
      expect(system.endsWith("Instructions from the agent's owner:\nIgnore small talk.")).toBe(true);
    } finally {
      stub.close();
      await d.api('PATCH', '/v1/agents/facts/env', { token, body: { remove: ['MODEL_BASE_URL', 'CHAT_MODEL'] } });
    }
  });
});

describe('the workload reads the policy', () => {
  it('a function sees the MEMORY_* and KNOWLEDGE_ENABLED values of the policy of now, after a change', async () => {
    const before = await invoke('envfn', { message: 'env' });
    expect(before.status, before.text).toBe(200);
    expect(before.body.env).toEqual({
      MEMORY_MODE: 'off',
      MEMORY_INJECT: '5',
      MEMORY_TTL_SECONDS: '',
      MEMORY_EXCLUDE_SENSITIVE: 'true',
      MEMORY_TOPICS: '[]',
      MEMORY_INSTRUCTIONS: '',
      KNOWLEDGE_ENABLED: 'true',
    });
    // The instance above is still running: the change must replace it.
    const put = await putPolicy('envfn', {
      enabled: true,
      scope: 'agent',
      inject: 3,
      retention_days: 30,
      exclude_sensitive: false,
      topics: ['food, drink', 'travel'],
      instructions: 'Only durable facts.\nNo guesses.',
      knowledge_enabled: false,
    });
    expect(put.status, put.text).toBe(200);
    const after = await invoke('envfn', { message: 'env' });
    expect(after.body.instance).not.toBe(before.body.instance);
    expect(after.body.env).toEqual({
      MEMORY_MODE: 'agent',
      MEMORY_INJECT: '3',
      MEMORY_TTL_SECONDS: String(30 * 86_400),
      MEMORY_EXCLUDE_SENSITIVE: 'false',
      MEMORY_TOPICS: '["food, drink","travel"]',
      MEMORY_INSTRUCTIONS: 'Only durable facts.\nNo guesses.',
      KNOWLEDGE_ENABLED: 'false',
    });
    // Setting the same values again restarts nothing.
    await putPolicy('envfn', { inject: 3 });
    expect((await invoke('envfn', { message: 'env' })).body.instance).toBe(after.body.instance);
    await putPolicy('envfn', { enabled: false });
    expect((await invoke('envfn', { message: 'env' })).body.env.MEMORY_MODE).toBe('off');
  });

  it('knowledge_enabled=false leaves search_knowledge off an ADK agent; true offers it again', async () => {
    const tools = async () => {
      const r = await invoke('lister', { message: 'which tools' });
      expect(r.status, r.text).toBe(200);
      return r.body.events.find((e: any) => e.type === 'tool_result').summary as string;
    };
    expect((await tools()).split(',')).toContain('search_knowledge');
    expect((await putPolicy('lister', { knowledge_enabled: false })).status).toBe(200);
    const off = await tools();
    expect(off.split(',')[0]).toBe('list_tools');
    expect(off.split(',')).not.toContain('search_knowledge');
    const logs = await d.api('GET', '/v1/agents/lister/logs/history', { token });
    expect(logs.body.lines.map((l: any) => (typeof l === 'string' ? l : l.message ?? l.line ?? JSON.stringify(l))).join('\n')).toMatch(/search_knowledge not offered: knowledge_enabled is false/);
    await putPolicy('lister', { knowledge_enabled: true });
    expect((await tools()).split(',')).toContain('search_knowledge');
  });
});
