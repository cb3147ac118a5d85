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
    // ink subscribes to stdin in an effect after the first render: keys written before are lost.
    await until(() => (ui.stdin.listenerCount('readable') > 0 ? true : undefined), 'ink listening to stdin');
    for (const k of keys) {
      ui.stdin.write(k);
      // ink reads stdin on the next tick.
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  /** Polls: a render (and the effect that reports the choice) may lag the keys on a busy machine. */
  const until = async <T,>(get: () => T | undefined, what: string): Promise<T> => {
    const end = Date.now() + 10_000;
    for (;;) {
      const v = get();
      if (v !== undefined) return v;
      if (Date.now() > end) throw new Error(`never got ${what}; last frame:\n${ui.lastFrame()}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  const frame = (pattern: RegExp) => until(() => (pattern.test(ui.lastFrame() ?? '') ? ui.lastFrame() : undefined), String(pattern));
  return { ui, type, frame, result: () => until(() => done, 'a choice') };
}

describe('InitPicker', () => {
  it('asks the name, then the kind, then the runtime; arrows and j/k move', async () => {
    const p = picker();
    await p.frame(/Name \(the folder, and the name it deploys as\): hello/);
    await p.type('w', 'e', 'b', ENTER);
    const kinds = await p.frame(/Kind/);
    expect(kinds).toMatch(/Name web/);
    expect(kinds).toMatch(/❯ Function/);
    expect(kinds).toMatch(/ {2}Agent/);
    await p.type(DOWN, DOWN, UP);
    await p.frame(/❯ Agent/);
    await p.type(ENTER);
    await p.frame(/Framework\n❯ LangGraph agent-langgraph\n {2}Google ADK agent-adk\n {2}CrewAI agent-crewai/);
    await p.type('j', 'j', 'k', ENTER);
    expect(await p.result()).toEqual({ choice: { name: 'web', template: 'agent-adk' } });
  });

  it('Enter on an empty name takes the default; MCP tools need no second question', async () => {
    const p = picker();
    await p.type(ENTER, UP, ENTER);
    expect(await p.result()).toEqual({ choice: { name: 'hello', template: 'mcp-python' } });
  });

  it('a name pasted with its Enter in one chunk goes on to the kind', async () => {
    const p = picker();
    await p.type(`fast${ENTER}`);
    await p.frame(/^Name fast\nKind/);
    await p.type(ENTER, DOWN, DOWN, ENTER);
    expect(await p.result()).toEqual({ choice: { name: 'fast', template: 'function-go' } });
  });

  it('a refused name says why and keeps asking; backspace edits', async () => {
    const p = picker({ checkName: (n) => (n === 'taken' ? 'taken already exists and is not empty' : undefined) });
    await p.type('taken', ENTER);
    await p.frame(/taken already exists and is not empty/);
    await p.type('\u007F', '\u007F', 'x', ENTER, ENTER, ENTER);
    expect(await p.result()).toEqual({ choice: { name: 'takx', template: 'function-python' } });
  });

  it('a folder given on the command line skips the name; Esc cancels', async () => {
    const p = picker({ name: 'given' });
    await p.frame(/^Name given\nKind/);
    await p.type(ESC);
    expect(await p.result()).toEqual({ choice: undefined });
  });
});
