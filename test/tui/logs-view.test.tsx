import { render } from 'ink-testing-library';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { LogLine } from '../../src/api/agents.js';
import { LogsView, type LogSource } from '../../src/tui/logs/LogsView.js';

// Colour on for the whole file (chalk reads it when loaded), so `color` alone decides whether styles are written.
vi.hoisted(() => {
  process.env.FORCE_COLOR = '1';
});

const ESC = '\u001b';
const KEYS = { up: `${ESC}[A`, down: `${ESC}[B`, pageUp: `${ESC}[5~`, pageDown: `${ESC}[6~`, escape: ESC, enter: '\r' };

/** A source the test feeds by hand, as the daemon would: lines and errors whenever it likes. */
function fakeSource() {
  let onLine: ((l: LogLine) => void) | undefined;
  let onError: ((m: string) => void) | undefined;
  let stops = 0;
  const source: LogSource = {
    subscribe(line, error) {
      onLine = line;
      onError = error;
      return () => {
        stops++;
        onLine = undefined;
      };
    },
  };
  return {
    source,
    emit: (...lines: LogLine[]) => lines.forEach((l) => onLine!(l)),
    fail: (m: string) => onError!(m),
    stops: () => stops,
  };
}

let clock = Date.parse('2026-11-27T10:00:00.000Z');
/** A line of `instance` (revision = the instance's name without its suffix), one second after the previous one. */
function line(message: string, o: { instance?: string; stream?: LogLine['stream'] } = {}): LogLine {
  const instance = o.instance ?? 'hello-00001-aaaaaa';
  clock += 1000;
  return { ts: new Date(clock).toISOString(), instance, revision: instance.replace(/-[0-9a-f]{6}$/, ''), stream: o.stream ?? 'stdout', message };
}

const mounted: { unmount: () => void }[] = [];
afterEach(() => {
  while (mounted.length) mounted.pop()!.unmount();
});

function mount(o: { rows?: number; columns?: number; color?: boolean; maxLines?: number } = {}) {
  const src = fakeSource();
  const onBack = vi.fn();
  const r = render(<LogsView title="agent hello" source={src.source} onBack={onBack} rows={o.rows ?? 12} columns={o.columns ?? 100} color={o.color ?? false} maxLines={o.maxLines} />);
  mounted.push(r);
  const frame = () => r.lastFrame() ?? '';
  /** Waits until the frame satisfies `test` (renders follow the source and the keys a tick later). */
  const until = async (test: (f: string) => boolean, what = 'the expected frame') => {
    const end = Date.now() + 2000;
    while (!test(frame())) {
      if (Date.now() > end) throw new Error(`never saw ${what}; last frame:\n${frame()}`);
      await new Promise((res) => setTimeout(res, 5));
    }
    return frame();
  };
  /** Sends keys one at a time, each after the previous was applied. */
  const press = async (...keys: string[]) => {
    for (const k of keys) {
      const before = r.frames.length;
      r.stdin.write(k);
      await new Promise((res) => setTimeout(res, 20));
      void before;
    }
  };
  return { ...src, onBack, frame, until, press, frames: () => r.frames };
}

/** The body lines of a frame (between the title and the footer). */
const body = (f: string) => f.split('\n').slice(1, -1);
const footer = (f: string) => f.split('\n').at(-1)!;

describe('LogsView', () => {
  it('follows: the newest lines fill the body and the oldest scroll off', async () => {
    const v = mount({ rows: 6 });
    expect(v.frame()).toContain('waiting for the first line');
    v.emit(...Array.from({ length: 10 }, (_, i) => line(`line ${i}`)));
    const f = await v.until((x) => x.includes('line 9'));
    // 6 rows: title, 4 body rows, footer; following shows the newest four.
    expect(f.split('\n')).toHaveLength(6);
    expect(body(f).map((l) => l.trim().split(' ').at(-1))).toEqual(['6', '7', '8', '9']);
    expect(footer(f)).toMatch(/^following/);
    v.emit(line('line 10'));
    expect(body(await v.until((x) => x.includes('line 10'))).at(-1)).toMatch(/line 10$/);
  });

  it('pauses with space: new lines are counted, not shown; arrows, PgUp, g and G scroll; p follows again', async () => {
    const v = mount({ rows: 7 });
    v.emit(...Array.from({ length: 20 }, (_, i) => line(`line ${i}`)));
    await v.until((x) => x.includes('line 19'));
    await v.press(' ');
    v.emit(line('line 20'), line('line 21'));
    let f = await v.until((x) => /paused — 2 new lines/.test(x), 'the pause marker');
    expect(f).not.toContain('line 21');
    expect(body(f).at(-1)).toMatch(/line 19$/);
    await v.press(KEYS.up, 'k');
    f = v.frame();
    expect(body(f).at(-1)).toMatch(/line 17$/);
    await v.press('j');
    expect(body(v.frame()).at(-1)).toMatch(/line 18$/);
    await v.press(KEYS.pageUp);
    expect(body(v.frame()).at(-1)).toMatch(/line 14$/);
    await v.press('g');
    // The first row is the revision marker, then the oldest line.
    expect(body(v.frame()).slice(0, 2)).toEqual(['── revision hello-00001 ──', expect.stringMatching(/line 0$/)]);
    await v.press(KEYS.pageDown);
    expect(body(v.frame())[0]).toMatch(/line 3$/);
    await v.press('G');
    f = await v.until((x) => footer(x).startsWith('following'));
    expect(body(f).at(-1)).toMatch(/line 21$/);
    await v.press('p');
    expect(footer(v.frame())).toMatch(/^paused — 0 new lines/);
    await v.press('p');
    expect(footer(v.frame())).toMatch(/^following/);
  });

  it('searches with /: matches are marked, n and N move between them and wrap', async () => {
    const v = mount({ rows: 8 });
    v.emit(line('GET /a 200'), line('boot ok'), line('GET /b 500'), ...Array.from({ length: 10 }, (_, i) => line(`noise ${i}`)), line('get /c 200'));
    await v.until((x) => x.includes('get /c'));
    await v.press('/', 'g', 'e', 't', KEYS.enter);
    // Lowercase query: any case. Following, the search lands on the newest match.
    let f = await v.until((x) => /\/get 3\/3 matches/.test(footer(x)), 'the match count');
    expect(f).toMatch(/^>.*get \/c 200$/m);
    await v.press('n');
    f = await v.until((x) => /\/get 1\/3 matches · search wrapped to the oldest match/.test(footer(x)));
    expect(f).toMatch(/^>.*GET \/a 200$/m);
    expect(footer(f)).toMatch(/^paused/);
    await v.press('n');
    f = await v.until((x) => /2\/3 matches/.test(footer(x)));
    expect(f).toMatch(/^>.*GET \/b 500$/m);
    await v.press('N', 'N');
    expect(footer(v.frame())).toMatch(/3\/3 matches · search wrapped to the newest match/);
    // A capital letter makes the search exact about case; Esc cancels typing without leaving.
    await v.press('/', 'G', 'E', 'T', KEYS.enter);
    expect(footer(await v.until((x) => /\/GET /.test(footer(x))))).toMatch(/2 matches/);
    await v.press('/', 'x', KEYS.escape);
    expect(v.onBack).not.toHaveBeenCalled();
    expect(footer(v.frame())).toMatch(/\/GET .*2 matches/);
    await v.press('/', 'z', 'z', 'z', KEYS.enter);
    expect(footer(await v.until((x) => /no line matches "zzz"/.test(x)))).toBeTruthy();
  });

  it('highlights matches in colour and marks them in the gutter without', async () => {
    const plain = mount({ color: false });
    plain.emit(line('alpha beta'), line('gamma'));
    await plain.until((x) => x.includes('gamma'));
    await plain.press('/', 'beta', KEYS.enter);
    const f = await plain.until((x) => /1\/1 match/.test(x));
    expect(f).toMatch(/^> .*alpha beta$/m);
    expect(f).toMatch(/^ {2}.*gamma$/m);
    expect(f).not.toContain(ESC);
    const coloured = mount({ color: true });
    coloured.emit(line('alpha beta'));
    await coloured.until((x) => x.includes('beta'));
    await coloured.press('/', 'beta', KEYS.enter);
    // Inverse video (SGR 7) around the hit.
    expect(await coloured.until((x) => x.includes(`${ESC}[7mbeta`))).toBeTruthy();
  });

  it('level filter: L cycles all, warn+ and error+, reading stderr, markers and tracebacks', async () => {
    const v = mount({ rows: 20 });
    v.emit(
      line('started'),
      line('some stderr chatter', { stream: 'stderr' }),
      line('INFO uvicorn running', { stream: 'stderr' }),
      line('WARNING: disk almost full'),
      line('level=error msg="db down"'),
      line('{"level":"error","msg":"json failure"}'),
      line('Traceback (most recent call last):', { stream: 'stderr' }),
      line('  File "main.py", line 3, in handle', { stream: 'stderr' }),
      line('ValueError: boom', { stream: 'stderr' }),
      line('0 errors found'),
    );
    await v.until((x) => x.includes('0 errors found'));
    await v.press('L');
    let f = await v.until((x) => /level warn\+/.test(footer(x)));
    expect(f).not.toContain('started');
    expect(f).not.toContain('INFO uvicorn');
    expect(f).not.toContain('0 errors found');
    expect(f).toMatch(/^ W .*some stderr chatter$/m);
    expect(f).toMatch(/^ W .*WARNING: disk almost full$/m);
    await v.press('L');
    f = await v.until((x) => /level error\+/.test(footer(x)));
    expect(body(f).filter((l) => !l.startsWith('──')).map((l) => l.slice(19))).toEqual([
      'level=error msg="db down"',
      '{"level":"error","msg":"json failure"}',
      'Traceback (most recent call last):',
      '  File "main.py", line 3, in handle',
      'ValueError: boom',
    ]);
    await v.press('L');
    f = await v.until((x) => !/level/.test(footer(x)));
    expect(f).toContain('started');
  });

  it('instance filter: i cycles through the instances seen, then back to all', async () => {
    const v = mount({ rows: 20 });
    v.emit(line('from a', { instance: 'hello-00001-aaaaaa' }), line('from b', { instance: 'hello-00001-bbbbbb' }), line('a again', { instance: 'hello-00001-aaaaaa' }));
    await v.until((x) => x.includes('a again'));
    await v.press('i');
    let f = await v.until((x) => /instance hello-00001-aaaaaa/.test(footer(x)));
    expect(f).toContain('a again');
    expect(f).not.toContain('from b');
    await v.press('i');
    f = await v.until((x) => /instance hello-00001-bbbbbb/.test(footer(x)));
    expect(f).toContain('from b');
    expect(f).not.toContain('from a');
    await v.press('i');
    f = await v.until((x) => !/instance/.test(footer(x)));
    expect(f).toContain('from a');
    expect(f).toContain('from b');
  });

  it('f jumps to the first line of the last failure, not its end', async () => {
    const v = mount({ rows: 8 });
    v.emit(
      line('ERROR an older failure'),
      line('recovered'),
      line('Traceback (most recent call last):', { stream: 'stderr' }),
      line('  File "main.py", line 9, in handle', { stream: 'stderr' }),
      line('  another line from b', { instance: 'hello-00001-bbbbbb' }),
      line('    raise ValueError("boom")', { stream: 'stderr' }),
      line('ValueError: boom', { stream: 'stderr' }),
      line('instance hello-00001-aaaaaa crashed (exit code 1); restarting in 100 ms', { stream: 'system' }),
      ...Array.from({ length: 12 }, (_, i) => line(`after ${i}`, { instance: 'hello-00001-cccccc' })),
    );
    await v.until((x) => x.includes('after 11'));
    await v.press('f');
    const f = await v.until((x) => /failure at .* in hello-00001-aaaaaa \(5 lines\)/.test(footer(x)), 'the failure notice');
    expect(body(f)[0]).toMatch(/^>E .*Traceback \(most recent call last\):$/);
    expect(footer(f)).toMatch(/^paused/);
    const none = mount();
    none.emit(line('all good'));
    await none.until((x) => x.includes('all good'));
    await none.press('f');
    expect(footer(await none.until((x) => /no failure/.test(x)))).toMatch(/no failure among the 1 lines kept/);
  });

  it('marks each revision where it starts, across a redeploy', async () => {
    const v = mount({ rows: 20 });
    v.emit(line('old one', { instance: 'hello-00003-aaaaaa' }), line('old two', { instance: 'hello-00003-aaaaaa' }));
    await v.until((x) => x.includes('old two'));
    v.emit(line('instance hello-00004-bbbbbb starting', { instance: 'hello-00004-bbbbbb', stream: 'system' }), line('new one', { instance: 'hello-00004-bbbbbb' }));
    const f = await v.until((x) => x.includes('new one'));
    expect(body(f).map((l) => (l.startsWith('──') ? l : l.slice(19)))).toEqual([
      '── revision hello-00003 ──',
      'old one',
      'old two',
      '── revision hello-00004 ──',
      'instance hello-00004-bbbbbb starting',
      'new one',
    ]);
  });

  it('at 40 and 20 columns every row is cut to the width, never wrapped', async () => {
    for (const columns of [40, 20]) {
      const v = mount({ rows: 10, columns });
      v.emit(line('x'.repeat(300)), line('short'), line(`tabs\tand ${ESC}[31mcolour codes${ESC}[0m from the app`));
      const f = await v.until((x) => x.includes('short'));
      const rows = f.split('\n');
      expect(rows.length).toBeLessThanOrEqual(10);
      for (const r of rows) expect(Array.from(r).length).toBeLessThanOrEqual(columns);
      expect(f).toMatch(/x+…/);
      expect(f).not.toContain(ESC);
    }
  });

  it('writes no escape codes with color=false, and styles with color=true', async () => {
    const plain = mount({ color: false });
    plain.emit(line('Traceback (most recent call last):', { stream: 'stderr' }), line('WARNING x'), line('sys', { stream: 'system' }));
    await plain.until((x) => x.includes('sys'));
    await plain.press(' ', '/', 'x', KEYS.enter);
    await plain.until((x) => /match/.test(x));
    expect(plain.frames().join('')).not.toContain(ESC);
    const coloured = mount({ color: true });
    coloured.emit(line('Traceback (most recent call last):', { stream: 'stderr' }));
    expect(await coloured.until((x) => x.includes(`${ESC}[31m`), 'red')).toBeTruthy();
  });

  it('keeps at most maxLines, drops the oldest, and stays paused on the same line while they go', async () => {
    const v = mount({ rows: 5, maxLines: 50 });
    v.emit(...Array.from({ length: 120 }, (_, i) => line(`n${i}`)));
    let f = await v.until((x) => x.includes('n119'));
    expect(f).toContain('50 lines');
    await v.press(' ', 'k');
    f = v.frame();
    expect(body(f).at(-1)).toMatch(/n118$/);
    v.emit(...Array.from({ length: 10 }, (_, i) => line(`m${i}`)));
    f = await v.until((x) => /10 new lines/.test(x));
    expect(body(f).at(-1)).toMatch(/n118$/);
  });

  it('? shows the keys; q and Esc go back; the source is stopped on unmount; its errors show in the footer', async () => {
    const v = mount();
    await v.press('?');
    let f = await v.until((x) => x.includes('jump to the start of the last failure'));
    expect(f).toContain('pause or follow again');
    await v.press('x');
    f = await v.until((x) => !x.includes('jump to the start'));
    expect(v.onBack).not.toHaveBeenCalled();
    v.fail('live logs interrupted (connection refused); retrying in 0.25 s');
    expect(footer(await v.until((x) => /interrupted/.test(x)))).toMatch(/following · live logs interrupted/);
    v.emit(line('back again'));
    expect(footer(await v.until((x) => x.includes('back again')))).not.toMatch(/interrupted/);
    await v.press('q');
    expect(v.onBack).toHaveBeenCalledTimes(1);
    await v.press(KEYS.escape);
    await new Promise((r) => setTimeout(r, 50));
    expect(v.onBack).toHaveBeenCalledTimes(2);
    mounted.pop()!.unmount();
    expect(v.stops()).toBe(1);
  });

  it('says when the filters hide every line, and starts over with another source', async () => {
    const first = fakeSource();
    const second = fakeSource();
    const props = { title: 'agent hello', onBack: () => undefined, rows: 10, columns: 80, color: false };
    const r = render(<LogsView {...props} source={first.source} />);
    mounted.push(r);
    first.emit(line('all fine'));
    await new Promise((res) => setTimeout(res, 20));
    r.stdin.write('L');
    await new Promise((res) => setTimeout(res, 20));
    expect(r.lastFrame()).toContain('no line passes the filters (L: level, i: instance)');
    r.rerender(<LogsView {...props} source={second.source} />);
    await new Promise((res) => setTimeout(res, 20));
    expect(first.stops()).toBe(1);
    second.emit(line('from the other workload'));
    await new Promise((res) => setTimeout(res, 20));
    const f = r.lastFrame()!;
    expect(f).toContain('from the other workload');
    expect(f).not.toContain('all fine');
    expect(f).toContain('1 line ');
    expect(footer(f)).toBe('following');
  });

  it('keys that arrive in one read (fast typing, a paste, tmux) each count', async () => {
    const v = mount({ rows: 20 });
    v.emit(line('GET /a'), line('ERROR bad'), line('GET /b'));
    await v.until((x) => x.includes('GET /b'));
    await v.press('LL');
    expect(footer(await v.until((x) => /level error\+/.test(footer(x))))).toMatch(/^following · level error\+$/);
    await v.press('L/GET\r');
    expect(footer(await v.until((x) => /2\/2 matches/.test(x)))).toMatch(/^paused — 0 new lines · \/GET 2\/2 matches$/);
  });
});
