import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { InitPicker, type InitChoice } from '../../src/tui/InitPicker.js';

const UP = '\u001B[A';
const DOWN = '\u001B[B';
const ESC = '\u001B';
const ENTER = '\r';

/** Renders the picker and returns a way to type keys (one chunk each) and the final choice. */
function picker(props: { name?: string; checkName?: (n: string) => string | undefined } = {}) {
  let done: { choice: InitChoice | undefined } | undefined;
  const ui = render(<InitPicker name={props.name} defaultName="hello" checkName={props.checkName ?? (() => undefined)} onDone={(choice) => (done = { choice })} />);
  const type = async (...keys: string[]) => {
    for (const k of keys) {
      ui.stdin.write(k);
      // ink reads stdin on the next tick.
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  return { ui, type, result: () => done };
}

describe('InitPicker', () => {
  it('asks the name, then the kind, then the runtime; arrows and j/k move', async () => {
    const p = picker();
    expect(p.ui.lastFrame()).toMatch(/Name \(the folder, and the name it deploys as\): hello/);
    await p.type('w', 'e', 'b', ENTER);
    const kinds = p.ui.lastFrame()!;
    expect(kinds).toMatch(/Name web/);
    expect(kinds).toMatch(/❯ Function/);
    expect(kinds).toMatch(/ {2}Agent/);
    await p.type(DOWN, DOWN, UP);
    expect(p.ui.lastFrame()).toMatch(/❯ Agent/);
    await p.type(ENTER);
    expect(p.ui.lastFrame()).toMatch(/Framework\n❯ LangGraph agent-langgraph\n {2}Google ADK agent-adk\n {2}CrewAI agent-crewai/);
    await p.type('j', 'j', 'k', ENTER);
    expect(p.result()).toEqual({ choice: { name: 'web', template: 'agent-adk' } });
  });

  it('Enter on an empty name takes the default; MCP tools need no second question', async () => {
    const p = picker();
    await p.type(ENTER, UP, ENTER);
    expect(p.result()).toEqual({ choice: { name: 'hello', template: 'mcp-python' } });
  });

  it('a name pasted with its Enter in one chunk goes on to the kind', async () => {
    const p = picker();
    await p.type(`fast${ENTER}`);
    expect(p.ui.lastFrame()).toMatch(/^Name fast\nKind/);
    await p.type(ENTER, DOWN, DOWN, ENTER);
    expect(p.result()).toEqual({ choice: { name: 'fast', template: 'function-go' } });
  });

  it('a refused name says why and keeps asking; backspace edits', async () => {
    const p = picker({ checkName: (n) => (n === 'taken' ? 'taken already exists and is not empty' : undefined) });
    await p.type('taken', ENTER);
    expect(p.ui.lastFrame()).toContain('taken already exists and is not empty');
    expect(p.result()).toBeUndefined();
    await p.type('\u007F', '\u007F', 'x', ENTER, ENTER, ENTER);
    expect(p.result()).toEqual({ choice: { name: 'takx', template: 'function-python' } });
  });

  it('a folder given on the command line skips the name; Esc cancels', async () => {
    const p = picker({ name: 'given' });
    expect(p.ui.lastFrame()).toMatch(/^Name given\nKind/);
    await p.type(ESC);
    expect(p.result()).toEqual({ choice: undefined });
  });
});
