import { describe, expect, it } from 'vitest';
import type { LogLine } from '../../src/api/agents.js';
import { lastFailureStart, type Entry } from '../../src/tui/logs/filters.js';
import { levelOf } from '../../src/tui/logs/levels.js';
import { parseLiveLine, revisionOf } from '../../src/tui/logs/live-lines.js';
import { ReplayFilter } from '../../src/client/log-replay-filter.js';
import { sanitize, truncate } from '../../src/tui/logs/render.js';

const at = (s: number) => new Date(Date.UTC(2026, 10, 27, 10, 0, s)).toISOString();
const l = (message: string, o: Partial<LogLine> = {}): LogLine => ({ ts: at(0), instance: 'hello-00001-aaaaaa', revision: 'hello-00001', stream: 'stdout', message, ...o });

describe('live text lines', () => {
  it('parses the daemon format and takes the revision from the instance name', () => {
    expect(parseLiveLine('2026-11-27T10:00:01.000Z hello-00004-ab12cd stderr: oops: a: b')).toEqual({
      ts: '2026-11-27T10:00:01.000Z',
      instance: 'hello-00004-ab12cd',
      revision: 'hello-00004',
      stream: 'stderr',
      message: 'oops: a: b',
    });
    expect(parseLiveLine('2026-11-27T10:00:01.000Z hello-00004-ab12cd stdout: ')?.message).toBe('');
    expect(parseLiveLine('agent hello has no running instance: it is scaled to zero')).toBeUndefined();
    expect(parseLiveLine('[log stream ended: instance x stopped]')).toBeUndefined();
    expect(revisionOf('my-fn-00012-0a1b2c')).toBe('my-fn-00012');
  });
});

describe('replay filter', () => {
  it('drops what a new connection repeats, keeps what follows, and keeps identical lines of one millisecond', () => {
    const f = new ReplayFilter();
    f.newConnection();
    const history = [l('a', { ts: at(1) }), l('same', { ts: at(2) }), l('same', { ts: at(2) })];
    expect(history.map((x) => f.accept(x))).toEqual([true, true, true]);
    f.newConnection();
    // The live ring replays all three, then a third "same" in the same millisecond and a later line.
    const live = [...history, l('same', { ts: at(2) }), l('b', { ts: at(3) }), l('b', { ts: at(3) })];
    expect(live.map((x) => f.accept(x))).toEqual([false, false, false, true, true, true]);
    f.newConnection();
    expect([l('b', { ts: at(3) }), l('b', { ts: at(3) }), l('c', { ts: at(4) })].map((x) => f.accept(x))).toEqual([false, false, true]);
  });

  it('keeps instances apart', () => {
    const f = new ReplayFilter();
    f.newConnection();
    expect(f.accept(l('x', { ts: at(5) }))).toBe(true);
    f.newConnection();
    expect(f.accept(l('y', { ts: at(1), instance: 'hello-00002-bbbbbb' }))).toBe(true);
    expect(f.accept(l('x', { ts: at(5) }))).toBe(false);
  });
});

describe('levels and the last failure', () => {
  it('reads levels from markers first, then the stream', () => {
    expect(levelOf(l('ERROR db down'))).toBe('error');
    expect(levelOf(l('time=1 level=error msg=x'))).toBe('error');
    expect(levelOf(l('{"level": "ERROR", "msg": "x"}'))).toBe('error');
    expect(levelOf(l('panic: runtime error: index out of range'))).toBe('error');
    expect(levelOf(l('KeyError: 3'))).toBe('error');
    expect(levelOf(l('found 0 errors'))).toBe('info');
    expect(levelOf(l('WARNING: low disk'))).toBe('warn');
    expect(levelOf(l('DeprecationWarning: old api', { stream: 'stderr' }))).toBe('warn');
    expect(levelOf(l('INFO: Uvicorn running', { stream: 'stderr' }))).toBe('info');
    expect(levelOf(l('something', { stream: 'stderr' }))).toBe('warn');
    expect(levelOf(l('instance x crashed (exit code 3); restarting in 100 ms', { stream: 'system' }))).toBe('error');
    expect(levelOf(l('instance x stopping: scaled to zero after 300 s idle', { stream: 'system' }))).toBe('info');
    const error = { line: l('Traceback (most recent call last):', { stream: 'stderr' }), level: 'error' as const };
    expect(levelOf(l('  File "x.py", line 1', { stream: 'stderr' }), error)).toBe('error');
    expect(levelOf(l('  File "x.py", line 1', { stream: 'stderr' }))).toBe('warn');
  });

  it('the failure starts at the first error line of the newest burst of its instance', () => {
    const entries: Entry[] = [
      l('ERROR old'),
      l('ok'),
      l('Traceback (most recent call last):'),
      l('ok from b', { instance: 'hello-00001-bbbbbb' }),
      l('ValueError: x'),
      l('after', { instance: 'hello-00001-bbbbbb' }),
    ].map((line, seq) => ({ seq, line, level: levelOf(line) }));
    expect(lastFailureStart(entries)).toMatchObject({ entry: { seq: 2 }, lines: 2 });
    expect(lastFailureStart(entries, 'hello-00001-bbbbbb')).toBeUndefined();
  });
});

describe('rows', () => {
  it('takes out terminal sequences and control characters, and cuts with an ellipsis by code point', () => {
    expect(sanitize('\u001b[1;31mred\u001b[0m\ttab\u0007\r')).toBe('red    tab');
    expect(sanitize('\u001b]0;title\u0007text')).toBe('text');
    expect(truncate('abcdef', 4)).toBe('abc…');
    expect(truncate('abc', 3)).toBe('abc');
    expect(truncate('😀😀😀', 2)).toBe('😀…');
  });
});
