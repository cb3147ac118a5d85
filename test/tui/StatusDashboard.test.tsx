import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { StatusDashboard } from '../../src/tui/StatusDashboard.js';

describe('StatusDashboard', () => {
  it('renders sections with states, messages and empty markers', () => {
    const { lastFrame } = render(
      <StatusDashboard
        project="default"
        updatedAt="09:30:00"
        width={80}
        sections={[
          { title: 'agents', rows: [{ name: 'hello', state: 'ready', ready: true, detail: 'http://hello-abc123.apps.localhost:7070' }, { name: 'broken', state: 'failed', ready: false, message: 'build failed: missing main.py' }] },
          { title: 'topics', rows: [] },
          { title: 'caches', rows: [], error: 'could not read caches: 503 store unavailable' },
        ]}
      />,
    );
    const frame = lastFrame()!;
    expect(frame).toContain('project default');
    expect(frame).toMatch(/agents \(2\)/);
    expect(frame).toMatch(/hello\s+ready\s+http:\/\/hello-abc123\.apps\.localhost:7070/);
    expect(frame).toMatch(/broken\s+failed\s+build failed: missing main\.py/);
    expect(frame).toMatch(/topics \(0\)\n\s*none/);
    expect(frame).toContain('could not read caches: 503 store unavailable');
  });
});
