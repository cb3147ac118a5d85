import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { describe, expect, it, beforeAll, afterAll } from 'vitest';
import type { TestDaemon } from '../helpers/daemon.js';
import { grant, makeUser } from '../helpers/fixtures.js';
import { SHIM_FIXTURES, archive, deployForm, fakeFrameworks, langgraphSample, waitState, useAgentDaemon, walk, type Entry } from '../agents/helpers.js';

/**
 * Issue 23, sessions and memory, through the real daemon: functions see `history` and `memories`
 * as event fields; the agent frameworks (their test doubles travel with the upload as vendored
 * packages, as in test/agents/agent-harness.test.ts) see the history through the harness.
 */
let d: TestDaemon;
let token: string;
useAgentDaemon((daemon, adminToken) => {
  d = daemon;
  token = adminToken;
});


const ECHO_PY = `def handle(event):
    history = event.get("history", [])
    return {"output": "turn %d: %s" % (len(history) + 1, event["message"]), "history": history, "memories": event.get("memories", []), "keys": sorted(event.keys())}
`;
const CREW_PY = `from crewai import Agent, Crew, Task

researcher = Agent(role="Researcher", goal="Answer questions", backstory="Knows where to look.")
answer = Task(description="Answer: {message} | before: {history} | known: {memories}", expected_output="A short answer", agent=researcher)
crew = Crew(agents=[researcher], tasks=[answer])
`;

const invoke = (name: string, body: Record<string, unknown>, tok?: string) => d.api('POST', `/v1/agents/${name}/invoke`, { body, token: tok });
const sid = (tag: string) => `${tag}-${Math.random().toString(36).slice(2)}-0123456789abcdefghij`;

beforeAll(async () => {
  const deploys: Array<[string, string, Entry[] | Record<string, string>]> = [
    ['echo', 'function', { 'main.py': ECHO_PY }],
    ['graph', 'langgraph', langgraphSample()],
    ['adk', 'adk', [...walk(join(SHIM_FIXTURES, 'agent-adk')), ...fakeFrameworks('google/')]],
    ['crew', 'crewai', [{ name: 'crew.py', content: CREW_PY }, ...fakeFrameworks('crewai/')]],
  ];
  for (const [name, framework, files] of deploys) {
    const r = await deployForm(d, token, { name, framework, ...(framework === 'function' ? { runtime: 'python' } : {}) }, archive(files));
    expect(r.status, JSON.stringify(r.body)).toBe(202);
  }
  await Promise.all(deploys.map(([name]) => waitState(d, token, name, 'ready', '', 60_000)));
}, 120_000);

describe('a two-turn conversation sees the first turn', () => {
  it('function: history arrives as a plain field; clone and rewind change what the next turn sees', async () => {
    const s = sid('fn');
    const first = await invoke('echo', { message: 'hello', session_id: s });
    expect(first.status).toBe(200);
    expect(first.body.output).toBe('turn 1: hello');
    expect(first.body.keys).toEqual(['message', 'session_id', 'user_id']);
    const second = await invoke('echo', { message: 'again', session_id: s });
    expect(second.body.output).toBe('turn 2: again');
    expect(second.body.history).toEqual([{ message: 'hello', output: 'turn 1: hello' }]);

    const got = await d.api('GET', `/v1/agents/echo/sessions/${s}`, { token });
    expect(got.status).toBe(200);
    expect(got.body.session).toMatchObject({ id: s, agent: 'echo', user_id: 'anonymous', turn_count: 2 });
    expect(got.body.turns.map((t: any) => [t.index, t.message, t.output, t.status])).toEqual([
      [1, 'hello', 'turn 1: hello', 200],
      [2, 'again', 'turn 2: again', 200],
    ]);

    const clone = await d.api('POST', `/v1/agents/echo/sessions/${s}:clone`, { token, body: { new_id: `${s}-copy` } });
    expect(clone.status).toBe(201);
    expect(clone.body.session).toMatchObject({ id: `${s}-copy`, turn_count: 2, cloned_from: s });
    const rewind = await d.api('POST', `/v1/agents/echo/sessions/${s}:rewind`, { token, body: { after_turn: 1 } });
    expect(rewind.status).toBe(200);
    expect(rewind.body).toMatchObject({ dropped: 1, session: { turn_count: 1 } });

    expect((await invoke('echo', { message: 'rewound', session_id: s })).body.output).toBe('turn 2: rewound');
    expect((await invoke('echo', { message: 'cloned', session_id: `${s}-copy` })).body.output).toBe('turn 3: cloned');

    const list = await d.api('GET', '/v1/agents/echo/sessions?page_size=1', { token });
    expect(list.status).toBe(200);
    expect(list.body.sessions).toHaveLength(1);
    expect(list.body.sessions[0].id).toBe(`${s}-copy`);
    expect(list.body.next_page_token).not.toBe('');
    const next = await d.api('GET', `/v1/agents/echo/sessions?page_size=1&page_token=${list.body.next_page_token}`, { token });
    expect(next.body.sessions[0].id).toBe(s);

    const del = await d.api('DELETE', `/v1/agents/echo/sessions/${s}-copy`, { token });
    expect(del.status).toBe(200);
    expect(del.body.deleted).toBe(true);
    expect((await d.api('GET', `/v1/agents/echo/sessions/${s}-copy`, { token })).status).toBe(404);
    expect((await invoke('echo', { message: 'fresh', session_id: `${s}-copy` })).body.output).toBe('turn 1: fresh');
  });

  it('langgraph: the second turn counts the first; rewind to 0 starts over', async () => {
    const s = sid('lg');
    expect((await invoke('graph', { message: 'weather', session_id: s })).body.output).toBe('Turn 1: facts about weather');
    expect((await invoke('graph', { message: 'rain', session_id: s })).body.output).toBe('Turn 2: facts about rain');
    const rewind = await d.api('POST', `/v1/agents/graph/sessions/${s}:rewind`, { token, body: { after_turn: 0 } });
    expect(rewind.body.dropped).toBe(2);
    expect((await invoke('graph', { message: 'snow', session_id: s })).body.output).toBe('Turn 1: facts about snow');
  });

  it('langgraph streaming turns are recorded too', async () => {
    const s = sid('lgs');
    const res = await fetch(`${d.url}/v1/agents/graph/invoke/stream`, { method: 'POST', body: JSON.stringify({ message: 'fog', session_id: s }), headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(200);
    await res.text();
    const got = await d.api('GET', `/v1/agents/graph/sessions/${s}`, { token });
    expect(got.body.turns[0]).toMatchObject({ message: 'fog', output: 'Turn 1: facts about fog' });
    expect(got.body.turns[0].events.length).toBeGreaterThan(1);
    expect((await invoke('graph', { message: 'mist', session_id: s })).body.output).toBe('Turn 2: facts about mist');
  });

  it('adk: the session seeded from history answers turn 2; a clone continues at 3', async () => {
    const s = sid('adk');
    expect((await invoke('adk', { message: 'weather in paris', session_id: s, user_id: 'u1' })).body.output).toBe('Answer 1: weather in paris');
    expect((await invoke('adk', { message: 'and rome', session_id: s, user_id: 'u1' })).body.output).toBe('Answer 2: and rome');
    await d.api('POST', `/v1/agents/adk/sessions/${s}:clone`, { token, body: { new_id: `${s}-b` } });
    expect((await invoke('adk', { message: 'and oslo', session_id: `${s}-b`, user_id: 'u1' })).body.output).toBe('Answer 3: and oslo');
  });

  it('crewai: the task interpolates {history}', async () => {
    const s = sid('crew');
    const one = await invoke('crew', { message: 'first question', session_id: s });
    expect(one.body.output).toBe('Researcher answered: Answer: first question | before:  | known: ');
    const two = await invoke('crew', { message: 'second', session_id: s });
    expect(two.body.output).toBe(`Researcher answered: Answer: second | before: User: first question\nAgent: ${one.body.output} | known: `);
  });

  it("another user's session id is refused", async () => {
    const s = sid('own');
    await invoke('echo', { message: 'mine', session_id: s, user_id: 'alice' });
    const r = await invoke('echo', { message: 'theirs', session_id: s, user_id: 'bob' });
    expect(r.status).toBe(409);
    expect(r.body.error).toMatch(/belongs to another user/);
  });
});

describe('memory', () => {
  it('is off by default: memorize is 409, an anonymous memorize is 401 on both routes', async () => {
    const s = sid('off');
    await invoke('echo', { message: 'My name is Ada.', session_id: s });
    expect((await d.api('GET', '/v1/agents/echo/memory/policy', { token })).body.policy).toEqual({
      enabled: false,
      scope: 'user',
      retention_days: null,
      inject: 5,
      exclude_sensitive: true,
      topics: [],
      instructions: '',
      knowledge_enabled: true,
    });
    const off = await d.api('POST', `/v1/agents/echo/sessions/${s}/memorize`, { token });
    expect(off.status).toBe(409);
    expect(off.body.error).toMatch(/memory is off.*PUT \/v1\/agents\/echo\/memory\/policy/);
    expect((await d.api('POST', `/v1/agents/echo/sessions/${s}/memorize`)).status).toBe(401);
    const anon = await invoke('echo', { message: 'hi', memorize: true });
    expect(anon.status).toBe(401);
    expect(anon.body.error).toMatch(/memorize requires a credential/);
    expect((await invoke('echo', { message: 'hi', memorize: true }, token)).status).toBe(409);
    expect((await d.api('POST', '/v1/agents/graph/invoke/stream', { body: { message: 'hi', memorize: true } })).status).toBe(401);
    const env = await d.api('PATCH', '/v1/agents/echo/env', { token, body: { set: { MEMORY_MODE: 'on' } } });
    expect(env.status).toBe(400);
    expect(env.body.error).toMatch(/\/v1\/agents\/\{name\}\/memory\/policy/);
  });

  it('memorize offline extracts first-person facts; invalidate hides one from the next invoke', async () => {
    const put = await d.api('PUT', '/v1/agents/echo/memory/policy', { token, body: { enabled: true } });
    expect(put.status).toBe(200);
    expect(put.body.policy).toMatchObject({ enabled: true, scope: 'user', retention_days: null, inject: 5, exclude_sensitive: true, topics: [] });
    const s = sid('mem');
    await invoke('echo', { message: 'Hi there! My name is Ada. Please remember that I like green tea. What is the time?', session_id: s, user_id: 'ada' });
    const m = await d.api('POST', `/v1/agents/echo/sessions/${s}/memorize`, { token });
    expect(m.status).toBe(200);
    expect(m.body.extractor).toBe('deterministic');
    expect(m.body.created.map((e: any) => [e.fact, e.user_id, e.source, e.confirmed])).toEqual([
      ['My name is Ada.', 'ada', 'generated', false],
      ['I like green tea.', 'ada', 'generated', false],
    ]);
    expect((await d.api('POST', `/v1/agents/echo/sessions/${s}/memorize`, { token })).body).toMatchObject({ created: [], skipped_duplicates: 2 });

    const seen = await invoke('echo', { message: 'what tea do I like?', user_id: 'ada' });
    expect(seen.body.memories).toEqual(['I like green tea.', 'My name is Ada.']);
    expect((await invoke('echo', { message: 'what tea?', user_id: 'someone-else' })).body.memories).toEqual([]);

    const tea = m.body.created[1].id;
    const inv = await d.api('POST', `/v1/agents/echo/memory/${tea}:invalidate`, { token });
    expect(inv.status).toBe(200);
    expect(inv.body.memory.invalidated).toBe(true);
    expect((await invoke('echo', { message: 'what tea do I like?', user_id: 'ada' })).body.memories).toEqual(['My name is Ada.']);
    const conf = await d.api('POST', `/v1/agents/echo/memory/${m.body.created[0].id}:confirm`, { token });
    expect(conf.body.memory.confirmed).toBe(true);

    const added = await d.api('POST', '/v1/agents/echo/memory', { token, body: { fact: 'Ada works nights.', user_id: 'ada' } });
    expect(added.status).toBe(201);
    expect(added.body.memory).toMatchObject({ source: 'manual', confirmed: true, invalidated: false });
    const list = await d.api('GET', '/v1/agents/echo/memory?user_id=ada', { token });
    expect(list.body.memories.map((e: any) => e.fact)).toEqual(['Ada works nights.', 'My name is Ada.']);
    const all = await d.api('GET', '/v1/agents/echo/memory?user_id=ada&include_invalidated=true&query=tea', { token });
    expect(all.body.memories[0].fact).toBe('I like green tea.');

    const status = await d.api('GET', '/v1/agents/echo/memory/status', { token });
    expect(status.body).toMatchObject({ extractor: 'deterministic', entries: { total: 3, served: 2, invalidated: 1, generated: 2, confirmed: 2, manual: 1 }, last_reindex_at: null });
    expect(status.body.last_memorize_at).toBeTruthy();
    const re = await d.api('POST', '/v1/agents/echo/memory:reindex', { token });
    expect(re.status).toBe(200);
    expect(re.body.last_reindex_at).toBeTruthy();

    const del = await d.api('DELETE', `/v1/agents/echo/memory/${added.body.memory.id}`, { token });
    expect(del.body).toMatchObject({ deleted: true, memory: { fact: 'Ada works nights.' } });
    expect((await d.api('DELETE', `/v1/agents/echo/memory/${added.body.memory.id}`, { token })).status).toBe(404);
    const erase = await d.api('DELETE', '/v1/agents/echo/memory?user_id=ada', { token });
    expect(erase.body).toEqual({ agent: 'echo', user_id: 'ada', erased: 2 });
  });

  it("invoke's memorize field commits the session before the response ends", async () => {
    const s = sid('field');
    const r = await invoke('echo', { message: 'I live in Lisbon.', session_id: s, user_id: 'lis', memorize: true }, token);
    expect(r.status).toBe(200);
    const list = await d.api('GET', '/v1/agents/echo/memory?user_id=lis', { token });
    expect(list.body.memories.map((e: any) => [e.fact, e.session_id])).toEqual([['I live in Lisbon.', s]]);
    expect((await invoke('echo', { message: 'where do I live?', user_id: 'lis' })).body.memories).toEqual(['I live in Lisbon.']);
    // The streaming variant memorizes too (langgraph: its turn arrives as NDJSON).
    await d.api('PUT', '/v1/agents/graph/memory/policy', { token, body: { enabled: true } });
    const st = await d.api('POST', '/v1/agents/graph/invoke/stream', { token, body: { message: 'My dog is called Rex.', session_id: sid('gs'), user_id: 'rex-owner', memorize: true } });
    expect(st.status).toBe(200);
    expect((await d.api('GET', '/v1/agents/graph/memory?user_id=rex-owner', { token })).body.memories.map((e: any) => e.fact)).toEqual(['My dog is called Rex.']);
  });

  it('an agent-scoped policy serves every user; the adk session state carries the memories', async () => {
    await d.api('PUT', '/v1/agents/adk/memory/policy', { token, body: { enabled: true, scope: 'agent', inject: 1 } });
    await d.api('POST', '/v1/agents/adk/memory', { token, body: { fact: 'The office is in Paris.' } });
    const r = await invoke('adk', { message: 'where is the office', user_id: 'anyone' });
    expect(r.body.output).toBe('Answer 1: where is the office (remembering: - The office is in Paris.)');
  });

  it('memorize with a model asks the OpenAI-compatible endpoint (a local stub server)', async () => {
    const asked: any[] = [];
    const stub: Server = createServer((req, res) => {
      let raw = '';
      req.on('data', (c) => (raw += c));
      req.on('end', () => {
        asked.push({ path: req.url, body: JSON.parse(raw) });
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ choices: [{ message: { role: 'assistant', content: JSON.stringify({ facts: ['The user prefers window seats'] }) } }] }));
      });
    });
    await new Promise<void>((r) => stub.listen(0, '127.0.0.1', r));
    try {
      const port = (stub.address() as { port: number }).port;
      const env = await d.api('PATCH', '/v1/agents/crew/env', { token, body: { set: { MODEL_BASE_URL: `http://127.0.0.1:${port}/v1`, CHAT_MODEL: 'stub-model' } } });
      expect(env.status).toBe(200);
      await waitState(d, token, 'crew', 'ready', '', 60_000);
      await d.api('PUT', '/v1/agents/crew/memory/policy', { token, body: { enabled: true } });
      const s = sid('model');
      expect((await invoke('crew', { message: 'book me a flight, window please', session_id: s, user_id: 'flyer' })).status).toBe(200);
      const m = await d.api('POST', `/v1/agents/crew/sessions/${s}/memorize`, { token });
      expect(m.status).toBe(200);
      expect(m.body).toMatchObject({ extractor: 'model', created: [{ fact: 'The user prefers window seats.', user_id: 'flyer', source: 'generated' }] });
      expect(asked).toHaveLength(1);
      expect(asked[0].path).toBe('/v1/chat/completions');
      expect(asked[0].body.model).toBe('stub-model');
      expect(asked[0].body.messages[1].content).toContain('User: book me a flight, window please');
      const next = await invoke('crew', { message: 'again', user_id: 'flyer' });
      expect(next.body.output).toContain('known: - The user prefers window seats.');
    } finally {
      stub.close();
    }
  });
});

describe('rules and rights', () => {
  it('owner rights: an outsider and a non-owner member get 404; anonymous gets 401', async () => {
    const outsider = await makeUser(d);
    const member = await makeUser(d);
    const def = d.db.prepare('SELECT id FROM acct_projects WHERE is_default = 1').get() as { id: string };
    grant(d, def.id, member.id, 'member');
    // An outsider names the project (without one the request resolves to no project: 409, as on every agent route).
    for (const bare of ['/v1/agents/echo/sessions', '/v1/agents/echo/memory', '/v1/agents/echo/memory/policy', '/v1/agents/echo/memory/status']) {
      const path = `${bare}?project=${def.id}`;
      expect((await d.api('GET', path, { token: outsider.token })).status, path).toBe(404);
      expect((await d.api('GET', path, { token: member.token })).status, path).toBe(404);
      expect((await d.api('GET', path)).status, path).toBe(401);
    }
    expect((await d.api('POST', `/v1/agents/echo/sessions/abc/memorize?project=${def.id}`, { token: outsider.token })).status).toBe(404);
  });

  it('id rules, unknown fields and bad values are 400; unknown ids 404', async () => {
    const s = sid('rules');
    await invoke('echo', { message: 'one', session_id: s });
    expect((await d.api('GET', '/v1/agents/echo/sessions/bad*id', { token })).status).toBe(400);
    expect((await d.api('GET', `/v1/agents/echo/sessions/${'x'.repeat(129)}`, { token })).status).toBe(400);
    expect((await d.api('GET', '/v1/agents/echo/sessions/nope', { token })).status).toBe(404);
    expect((await d.api('GET', '/v1/agents/nope/sessions', { token })).status).toBe(404);
    const junk = await d.api('POST', `/v1/agents/echo/sessions/${s}:rewind`, { token, body: { after_turn: 0, junk: 1 } });
    expect(junk.status).toBe(400);
    expect(junk.body.error).toMatch(/junk/);
    expect((await d.api('POST', `/v1/agents/echo/sessions/${s}:rewind`, { token, body: { after_turn: 5 } })).status).toBe(400);
    expect((await d.api('POST', `/v1/agents/echo/sessions/${s}:clone`, { token, body: { new_id: s } })).status).toBe(400);
    expect((await d.api('POST', `/v1/agents/echo/sessions/${s}:clone`, { token, body: { new_id: 'bad id' } })).status).toBe(400);
    expect((await d.api('GET', '/v1/agents/echo/memory?user_id=bad%20user', { token })).status).toBe(400);
    expect((await d.api('DELETE', '/v1/agents/echo/memory', { token })).status).toBe(400);
    expect((await d.api('PUT', '/v1/agents/echo/memory/policy', { token, body: { scope: 'everyone' } })).status).toBe(400);
    expect((await d.api('POST', '/v1/agents/echo/memory', { token, body: { fact: '' } })).status).toBe(400);
    expect((await d.api('POST', '/v1/agents/echo/memory/mem_nope:confirm', { token })).status).toBe(404);
    expect((await d.api('POST', '/v1/agents/echo/sessions/no-such-session/memorize', { token })).status).toBe(404);
    expect((await d.api('POST', '/v1/agents/echo/sessions/bad*id/memorize', { token })).status).toBe(400);
    expect((await d.api('POST', '/v1/agents/nope/sessions/abc/memorize', { token })).status).toBe(404);
    const bad = await d.api('GET', '/v1/agents/echo/sessions?page_size=201', { token });
    expect(bad.status).toBe(400);
  });

  it('the routes are in the OpenAPI document', async () => {
    const doc = await d.api('GET', '/v1/openapi.json');
    for (const p of ['/v1/agents/{name}/sessions/{id}:rewind', '/v1/agents/{name}/memory/policy', '/v1/agents/{name}/sessions/{id}/memorize', '/v1/agents/{name}/memory:reindex']) expect(doc.body.paths[p], p).toBeTruthy();
  });
});
