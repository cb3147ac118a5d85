import { beforeAll, describe, expect, it } from 'vitest';
import type { TestDaemon } from '../helpers/daemon.js';
import { makeProject } from '../helpers/fixtures.js';
import { archive, deployForm, fakeFrameworks, useAgentDaemon, waitState, type Entry } from '../agents/helpers.js';

/**
 * The harness's search_knowledge tool (issue 23): each framework's turn searches its own agent's
 * knowledge through the daemon with the workload's key (the frameworks' test doubles travel with
 * the upload, as in test/sessions/sessions.test.ts); a workload key reaches no other agent's.
 */
let d: TestDaemon;
let token: string;
useAgentDaemon((daemon, adminToken) => {
  d = daemon;
  token = adminToken;
});


// No tools of its own: the harness attaches search_knowledge, which the fake model calls with the
// message's last word.
const ADK_AGENT = `from google.adk.agents import Agent

root_agent = Agent(name="librarian", model="m", instruction="Answer from the knowledge base.", tools=[])
`;
const GRAPH = `from langgraph.graph import END, START, MessagesState, StateGraph
from platform_knowledge import search_knowledge


def agent(state):
    question = state["messages"][-1]["content"]
    return {"messages": [{"role": "assistant", "content": "", "tool_calls": [{"name": "search_knowledge", "args": {"query": question, "limit": 1}, "id": "k1"}]}]}


def tools(state):
    call = state["messages"][-1]["tool_calls"][0]
    return {"messages": [{"role": "tool", "name": "search_knowledge", "content": search_knowledge(**call["args"]), "tool_call_id": "k1"}]}


def respond(state):
    return {"messages": [{"role": "assistant", "content": state["messages"][-1]["content"]}]}


builder = StateGraph(MessagesState)
builder.add_node("agent", agent)
builder.add_node("tools", tools)
builder.add_node("respond", respond)
builder.add_edge(START, "agent")
builder.add_edge("agent", "tools")
builder.add_edge("tools", "respond")
builder.add_edge("respond", END)
graph = builder.compile()
`;
const CREW = `from crewai import Agent, Crew, Task
from platform_knowledge import search_knowledge

librarian = Agent(role="Librarian", goal="Answer from the knowledge base", tools=[search_knowledge])
crew = Crew(agents=[librarian], tasks=[Task(description="{message}", expected_output="passages", agent=librarian)])
`;
// A function that calls the daemon with its own workload key: the path to call is the message.
const SNOOP = `import json, os, urllib.error, urllib.request

_opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def handle(event):
    req = urllib.request.Request(os.environ["SVC_API_URL"] + event["message"], headers={"authorization": "Bearer " + os.environ["SVC_PROJECT_KEY"]})
    try:
        with _opener.open(req, timeout=10) as r:
            return {"status": r.status, "body": json.load(r)}
    except urllib.error.HTTPError as e:
        return {"status": e.code, "body": json.load(e)}
`;

const notes = (name: string) => [
  { source: `${name}-winter.md`, text: `Winter notes of ${name}: in winter the lake freezes and winter nights are long.` },
  { source: 'summer.md', text: 'Summer is hot and the days are long.' },
];
const invoke = (name: string, message: string) => d.api('POST', `/v1/agents/${name}/invoke`, { body: { message } });

beforeAll(async () => {
  const deploys: Array<[string, string, Entry[] | Record<string, string>]> = [
    ['kadk', 'adk', [{ name: 'agent.py', content: ADK_AGENT }, ...fakeFrameworks('google/')]],
    ['kgraph', 'langgraph', [{ name: 'graph.py', content: GRAPH }, ...fakeFrameworks('langgraph/')]],
    ['kcrew', 'crewai', [{ name: 'crew.py', content: CREW }, ...fakeFrameworks('crewai/')]],
    ['snoop', 'function', { 'main.py': SNOOP }],
  ];
  for (const [name, framework, files] of deploys) {
    const r = await deployForm(d, token, { name, framework, ...(framework === 'function' ? { runtime: 'python' } : {}) }, archive(files));
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    const k = await d.api('POST', `/v1/agents/${name}/knowledge`, { token, body: { documents: notes(name) } });
    expect(k.status, k.text).toBe(201);
  }
  await Promise.all(deploys.map(([name]) => waitState(d, token, name, 'ready', '', 60_000)));
}, 120_000);

describe('search_knowledge in each framework', () => {
  it('adk: the harness attaches the tool to root_agent; the turn returns the top chunk', async () => {
    const r = await invoke('kadk', 'tell me about winter');
    expect(r.status, r.text).toBe(200);
    expect(r.body.tool_calls[0].name).toBe('search_knowledge');
    const call = r.body.events.find((e: any) => e.type === 'tool_call');
    expect(call).toMatchObject({ name: 'search_knowledge', args: { query: 'winter' } });
    const result = r.body.events.find((e: any) => e.type === 'tool_result');
    expect(result.summary).toMatch(/^\[1\] kadk-winter\.md \(chunk 0, score [\d.e-]+\)\nWinter notes of kadk/);
  });

  it('langgraph: a node imports search_knowledge; the answer is the top chunk', async () => {
    const r = await invoke('kgraph', 'winter');
    expect(r.status, r.text).toBe(200);
    expect(r.body.output).toMatch(/^\[1\] kgraph-winter\.md \(chunk 0, score [\d.e-]+\)\nWinter notes of kgraph: in winter the lake freezes/);
    // limit 1: only the top chunk comes back.
    expect(r.body.output).not.toContain('summer.md');
  });

  it('crewai: an agent given the tool answers with the top chunk', async () => {
    const r = await invoke('kcrew', 'winter');
    expect(r.status, r.text).toBe(200);
    expect(r.body.output).toMatch(/^Librarian found: \[1\] kcrew-winter\.md \(chunk 0, score [\d.e-]+\)\nWinter notes of kcrew/);
    expect(r.body.tool_calls[0].name).toBe('search_knowledge');
  });

  it('nothing matching is said plainly, not an error', async () => {
    const r = await invoke('kgraph', 'xylophone');
    expect(r.body.output).toBe('no knowledge matches the query');
  });
});

describe("a workload key searches its own agent's knowledge only", () => {
  const asWorkload = async (path: string) => {
    const r = await invoke('snoop', path);
    expect(r.status, r.text).toBe(200);
    return r.body as { status: number; body: any };
  };

  it('its own agent: 200 with ranked chunks', async () => {
    const own = await asWorkload('/v1/agents/snoop/knowledge?query=winter');
    expect(own.status).toBe(200);
    expect(own.body.results[0].source).toBe('snoop-winter.md');
  });

  it("another agent's knowledge is 404, as for a missing agent", async () => {
    const other = await asWorkload('/v1/agents/kadk/knowledge?query=winter');
    const missing = await asWorkload('/v1/agents/ghost/knowledge?query=winter');
    expect(other).toMatchObject({ status: 404, body: { error: 'unknown agent kadk', request_id: expect.stringMatching(/^req_/) } });
    expect(missing).toMatchObject({ status: 404, body: { error: 'unknown agent ghost' } });
  });

  it("another project's is 404; its own knowledge is read-only (403 to list)", async () => {
    const elsewhere = makeProject(d);
    const other = await asWorkload(`/v1/agents/snoop/knowledge?query=winter&project=${elsewhere.slug}`);
    expect(other).toMatchObject({ status: 404, body: { error: 'project not found' } });
    const list = await asWorkload('/v1/agents/snoop/knowledge');
    expect(list.status).toBe(403);
    expect(list.body.error).toMatch(/may only search its own agent's knowledge/);
  });
});
