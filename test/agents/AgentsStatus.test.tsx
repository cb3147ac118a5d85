import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { AgentsStatus } from '../../src/tui/AgentsStatus.js';
import type { AgentView } from '../../src/api/agents.js';

const base = { kind: 'function', framework: 'function', owner: 'a@b.c', project_id: '00000000-0000-0000-0000-000000000000', created_at: '2026-01-01T00:00:00Z', updated_at: '2026-01-01T00:00:00Z', } as const;
const agents: AgentView[] = ([
  { ...base, name: 'hello', state: 'ready', ready: true, latest_revision: 'hello-00002', public_url: 'http://hello-abc123.apps.localhost:7070' },
  {
    ...base,
    name: 'kept',
    state: 'ready',
    ready: true,
    latest_revision: 'kept-00003',
    serving_revision: 'kept-00002',
    public_url: 'http://kept-abc123.apps.localhost:7070',
    message: 'revision kept-00003 failed to build (kept-00002 keeps serving): ./main.go:4:1: syntax error: unexpected }\n# function\n./main.go:4:1: syntax error: unexpected }',
  },
  { ...base, name: 'broken', state: 'failed', ready: false, public_url: 'http://broken-abc123.apps.localhost:7070', message: 'build 1 for broken\nframework adk needs "google-adk"' },
] as Omit<AgentView, 'traffic' | 'active_traffic'>[]).map((a) => ({ ...a, traffic: [], active_traffic: [] }));

describe('AgentsStatus', () => {
  it('shows each agent with its state, revision and address, and why a failed one failed', () => {
    const { lastFrame } = render(<AgentsStatus agents={agents} updatedAt={new Date('2026-01-01T10:11:12Z')} />);
    const frame = lastFrame()!;
    expect(frame).toMatch(/NAME +STATE +REVISION +URL/);
    expect(frame).toMatch(/hello +ready +hello-00002 +http:\/\/hello-abc123\.apps\.localhost:7070/);
    expect(frame).toMatch(/broken +failed +- +http:\/\/broken/);
    expect(frame).toContain('framework adk needs "google-adk"');
    // A newer revision that failed while the older one serves: ready on the serving revision, the failure beneath.
    expect(frame).toMatch(/kept +ready +kept-00002 +http:\/\/kept/);
    expect(frame).toMatch(/ {2}revision kept-00003 failed to build \(kept-00002 keeps serving\): \.\/main\.go:4:1: syntax error/);
    expect(frame).toContain('updated 10:11:12');
  });

  it('says so when there is nothing deployed', () => {
    expect(render(<AgentsStatus agents={[]} />).lastFrame()).toContain('no agents yet');
  });
});
