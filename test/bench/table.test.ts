import { describe, expect, it } from 'vitest';
import { parseBenchArgs } from '../../bench/options.js';
import { runSections, type Section } from '../../bench/runner.js';
import { formatTable, goalText, passOf, resultsDocument, type Row, type RunInfo } from '../../bench/table.js';

const row = (r: Partial<Row>): Row => ({ bench: 'b', metric: 'm', ...r });

describe('pass', () => {
  it('compares the figure with a bound, inclusive unless strict', () => {
    expect(passOf(row({ figure: 200, unit: 'ms', goal: { max: 200, unit: 'ms' } }))).toBe('yes');
    expect(passOf(row({ figure: 200, unit: 'ms', goal: { max: 200, strict: true, unit: 'ms' } }))).toBe('no');
    expect(passOf(row({ figure: 199.9, unit: 'ms', goal: { max: 200, strict: true, unit: 'ms' } }))).toBe('yes');
    expect(passOf(row({ figure: 5000, goal: { min: 5000 } }))).toBe('yes');
    expect(passOf(row({ figure: 4999, goal: { min: 5000 } }))).toBe('no');
  });

  it('compares figure / baseline for a ratio goal', () => {
    expect(passOf(row({ figure: 60, baselineFigure: 40, goal: { max: 1.5, of: 'ratio' } }))).toBe('yes');
    expect(passOf(row({ figure: 61, baselineFigure: 40, goal: { max: 1.5, of: 'ratio' } }))).toBe('no');
    // No baseline measured: the goal cannot be shown to hold.
    expect(passOf(row({ figure: 61, goal: { max: 1.5, of: 'ratio' } }))).toBe('no');
  });

  it('fails a goal whose figure is missing or not a number', () => {
    expect(passOf(row({ goal: { max: 1 } }))).toBe('no');
    expect(passOf(row({ figure: NaN, goal: { max: 1 } }))).toBe('no');
  });

  it('is blank without a structured goal and for skipped rows; no for a failed section', () => {
    expect(passOf(row({ value: '12 ms', goal: '< 50 ms' }))).toBe('');
    expect(passOf(row({ value: '12 ms' }))).toBe('');
    expect(passOf(row({ skipped: 'quick mode', goal: { min: 0.99 } }))).toBe('');
    expect(passOf(row({ error: 'boom' }))).toBe('no');
  });
});

describe('goal text', () => {
  it('says the bound with its unit', () => {
    expect(goalText({ max: 200, strict: true, unit: 'ms' })).toBe('< 200 ms');
    expect(goalText({ max: 1, unit: 'ms' })).toBe('<= 1 ms');
    expect(goalText({ min: 5000 })).toBe('>= 5000');
    expect(goalText({ max: 1.5, of: 'ratio' })).toBe('<= 1.5x');
    expect(goalText({ min: 1, max: 2 })).toBe('>= 1 and <= 2');
    expect(goalText('<= 300 ms')).toBe('<= 300 ms');
  });
});

describe('table', () => {
  it('prints one aligned table with what, figure, baseline, ratio, goal and pass', () => {
    const lines = formatTable([
      row({ bench: 'cli', metric: 'platform --version', figure: 61.234, unit: 'ms', baseline: 'node -e 0 40.0 ms', baselineFigure: 40, goal: { max: 1.5, of: 'ratio' } }),
      row({ bench: 'old', metric: 'text row', value: 'a | b', goal: '< 50 ms' }),
      row({ bench: 'vector', metric: 'recall at 100k', skipped: 'quick mode' }),
      row({ bench: 'mcp', metric: 'section failed', error: 'daemon did not start' }),
    ]);
    expect(lines[0]!.split('|').map((c) => c.trim())).toEqual(['', 'what', 'figure', 'baseline', 'ratio', 'goal', 'pass', '']);
    expect(lines[1]).toMatch(/^\|-+\|-+\|-+\|-+\|-+\|-+\|$/);
    expect(new Set(lines.map((l) => l.length)).size).toBe(1);
    const cells = lines.slice(2).map((l) => l.split('|').slice(1, -1).map((c) => c.trim()));
    expect(cells[0]).toEqual(['cli: platform --version', '61.2 ms', 'node -e 0 40.0 ms', '1.53x', '<= 1.5x', 'no']);
    // A pipe in a cell would add a column.
    expect(cells[1]).toEqual(['old: text row', 'a / b', '', '', '< 50 ms', '']);
    expect(cells[2]).toEqual(['vector: recall at 100k', 'SKIPPED: quick mode', '', '', '', '']);
    expect(cells[3]).toEqual(['mcp: section failed', 'ERROR: daemon did not start', '', '', '', 'no']);
  });
});

describe('results.json', () => {
  it('carries the run and every row with its numbers, goal and verdict', () => {
    const info: RunInfo = {
      commit: 'abc123',
      dirty: false,
      date: '2026-11-27T14:00:00.000Z',
      mode: 'quick',
      node: 'v22.0.0',
      load_average: { start: [1, 2, 3], end: [1.5, 2, 3] },
      wall_seconds: 150,
      sections: [{ name: 'daemon', seconds: 20, rows: 2 }],
    };
    const doc = JSON.parse(
      JSON.stringify(
        resultsDocument(
          [
            row({ section: 'daemon', bench: 'daemon', metric: 'RSS at rest', figure: 70.5, unit: 'MiB', goal: { max: 80, strict: true, unit: 'MiB' } }),
            row({ section: 'daemon', bench: 'daemon', metric: 'floor', value: '40 ms / 60 ms' }),
          ],
          info,
        ),
      ),
    );
    expect(doc).toMatchObject({ commit: 'abc123', mode: 'quick', node: 'v22.0.0', load_average: { start: [1, 2, 3] }, wall_seconds: 150 });
    expect(doc.rows).toEqual([
      {
        section: 'daemon',
        bench: 'daemon',
        metric: 'RSS at rest',
        figure: 70.5,
        baseline: null,
        unit: 'MiB',
        ratio: null,
        goal: { max: 80, strict: true, unit: 'MiB' },
        goal_text: '< 80 MiB',
        pass: 'yes',
        shown: { figure: '70.50 MiB', baseline: '', ratio: '' },
      },
      {
        section: 'daemon',
        bench: 'daemon',
        metric: 'floor',
        figure: null,
        baseline: null,
        unit: null,
        ratio: null,
        goal: null,
        goal_text: '',
        pass: '',
        shown: { figure: '40 ms / 60 ms', baseline: '', ratio: '' },
      },
    ]);
  });
});

describe('arguments', () => {
  const known = ['core', 'daemon', 'vector'];
  it('reads quick mode and the sections named, leaving section knobs alone', () => {
    expect(parseBenchArgs([], known)).toEqual({ quick: false, only: [] });
    expect(parseBenchArgs(['--quick'], known)).toEqual({ quick: true, only: [] });
    expect(parseBenchArgs(['--quick', 'vector'], known)).toEqual({ quick: true, only: ['vector'] });
    expect(parseBenchArgs(['vector', '--n', '100000', '--kinds', 'none', '--vector-1m', 'daemon'], known)).toEqual({ quick: false, only: ['vector', 'daemon'] });
  });

  it('refuses a section it does not know', () => {
    expect(() => parseBenchArgs(['vectr'], known)).toThrow(/unknown benchmark section "vectr"/);
  });
});

describe('sections', () => {
  it('runs the sections named with the options, and a failing one becomes a failed row without losing the others', async () => {
    const seen: boolean[] = [];
    const sections: Array<[string, Section]> = [
      ['one', async (o) => (seen.push(o.quick), [{ bench: 'one', metric: 'a', figure: 1, goal: { max: 2 } }])],
      ['two', async () => {
        throw new Error('daemon did not start\nstack...');
      }],
      ['three', async () => [{ bench: 'three', metric: 'b', value: 'x' }]],
      ['four', async () => [{ bench: 'four', metric: 'c', value: 'y' }]],
    ];
    const log: string[] = [];
    const { rows, ran } = await runSections(sections, { quick: true }, [], (l) => log.push(l));
    expect(seen).toEqual([true]);
    expect(rows.map((r) => [r.section, r.metric, passOf(r)])).toEqual([
      ['one', 'a', 'yes'],
      ['two', 'section failed', 'no'],
      ['three', 'b', ''],
      ['four', 'c', ''],
    ]);
    expect(rows[1]!.error).toBe('daemon did not start');
    expect(ran.map((s) => [s.name, s.rows, s.error])).toEqual([
      ['one', 1, undefined],
      ['two', 0, 'daemon did not start'],
      ['three', 1, undefined],
      ['four', 1, undefined],
    ]);

    const picked = await runSections(sections, { quick: false }, ['three', 'one'], () => {});
    expect(picked.rows.map((r) => r.section)).toEqual(['one', 'three']);
    expect(seen).toEqual([true, false]);
  });
});
