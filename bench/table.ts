/**
 * The one table of `npm run bench` (issue 26) and its machine-readable twin, bench/results.json.
 * Pure: no daemon, no clock, so test/bench/table.test.ts covers it.
 */

/**
 * What a row's figure must be. `of: 'ratio'` compares figure / baseline figure, otherwise the figure
 * itself (in the row's unit). `strict` makes the bound exclusive ("under 200 ms").
 */
export interface Goal {
  max?: number;
  min?: number;
  strict?: boolean;
  of?: 'figure' | 'ratio';
  unit?: string;
}

export interface Row {
  bench: string;
  metric: string;
  /** The figure as shown; from `figure` and `unit` when absent. */
  value?: string;
  figure?: number;
  unit?: string;
  /** The baseline as shown; from `baselineFigure` when absent. */
  baseline?: string;
  baselineFigure?: number;
  /** As shown; figure / baseline figure when absent and both are numbers. */
  ratio?: string;
  /** A structured goal decides `pass`; a text goal is shown as it is, with a blank pass. */
  goal?: string | Goal;
  /** Not measured in this run, and why (quick mode, opt-in, no engine): pass stays blank. */
  skipped?: string;
  /** The section failed: the row carries its error and fails. */
  error?: string;
  /** The `npm run bench` section that produced the row (set by run.ts). */
  section?: string;
}

export type Pass = 'yes' | 'no' | '';

/** A number in a table cell: whole above 100, two decimals above 1, four below (recall 0.9995). */
export function formatNumber(x: number, unit?: string): string {
  if (!Number.isFinite(x)) return String(x);
  const abs = Math.abs(x);
  const text = abs >= 100 ? Math.round(x).toString() : abs >= 1 || abs === 0 ? x.toFixed(unit === 'ms' ? 1 : 2) : x.toFixed(unit === 'ms' ? 2 : 4);
  return unit ? `${text} ${unit}` : text;
}

/** A data size in a row's name: 2k, 2.5k, 100k, 1M. */
export const thousands = (n: number) => (n >= 1e6 && n % 1e5 === 0 ? `${n / 1e6}M` : `${n / 1000}k`);

export function goalText(goal: Goal | string | undefined): string {
  if (goal === undefined) return '';
  if (typeof goal === 'string') return goal;
  const unit = goal.of === 'ratio' ? 'x' : goal.unit ? ` ${goal.unit}` : '';
  const parts: string[] = [];
  if (goal.min !== undefined) parts.push(`${goal.strict ? '>' : '>='} ${goal.min}${unit}`);
  if (goal.max !== undefined) parts.push(`${goal.strict ? '<' : '<='} ${goal.max}${unit}`);
  return parts.join(' and ');
}

/** The number a structured goal is checked against: the figure, or figure / baseline. */
export function goalSubject(row: Row): number | undefined {
  if (typeof row.goal !== 'object') return undefined;
  if (row.figure === undefined) return undefined;
  if (row.goal.of !== 'ratio') return row.figure;
  return row.baselineFigure ? row.figure / row.baselineFigure : undefined;
}

export function passOf(row: Row): Pass {
  if (row.error !== undefined) return 'no';
  if (row.skipped !== undefined || typeof row.goal !== 'object') return '';
  const x = goalSubject(row);
  // A goal whose figure was not measured (NaN from an empty sample) is not met.
  if (x === undefined || !Number.isFinite(x)) return 'no';
  const { min, max, strict } = row.goal;
  if (min !== undefined && (strict ? x <= min : x < min)) return 'no';
  if (max !== undefined && (strict ? x >= max : x > max)) return 'no';
  return 'yes';
}

export interface Cells {
  what: string;
  figure: string;
  baseline: string;
  ratio: string;
  goal: string;
  pass: Pass;
}

export function cellsOf(row: Row): Cells {
  const figure = row.error !== undefined ? `ERROR: ${row.error}` : row.skipped !== undefined ? `SKIPPED: ${row.skipped}` : (row.value ?? (row.figure !== undefined ? formatNumber(row.figure, row.unit) : ''));
  const baseline = row.baseline ?? (row.baselineFigure !== undefined ? formatNumber(row.baselineFigure, row.unit) : '');
  const derived = row.figure !== undefined && row.baselineFigure ? `${(row.figure / row.baselineFigure).toFixed(2)}x` : '';
  return { what: `${row.bench}: ${row.metric}`, figure, baseline, ratio: row.ratio ?? derived, goal: goalText(row.goal), pass: passOf(row) };
}

const COLUMNS: (keyof Cells)[] = ['what', 'figure', 'baseline', 'ratio', 'goal', 'pass'];

/** The table as lines of a Markdown table (it pastes into docs/decisions as it is). */
export function formatTable(rows: Row[]): string[] {
  const cells = rows.map(cellsOf);
  // A pipe inside a cell would split its column.
  const text = (c: Cells, k: keyof Cells) => String(c[k]).replaceAll('|', '/');
  const widths = COLUMNS.map((k) => Math.max(k.length, ...cells.map((c) => text(c, k).length)));
  const line = (vals: string[]) => `| ${vals.map((v, i) => v.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(COLUMNS), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...cells.map((c) => line(COLUMNS.map((k) => text(c, k))))];
}

export interface RunInfo {
  commit: string;
  /** Uncommitted changes in the checkout when the run started. */
  dirty: boolean;
  date: string;
  mode: 'quick' | 'full';
  node: string;
  /** os.loadavg() (1, 5 and 15 minutes) when the run started and when it ended. */
  load_average: { start: number[]; end: number[] };
  wall_seconds: number;
  sections: Array<{ name: string; seconds: number; rows: number; error?: string }>;
}

/** bench/results.json: the run and every row with its numbers, its goal and whether it passed. */
export function resultsDocument(rows: Row[], info: RunInfo) {
  return {
    ...info,
    rows: rows.map((row) => {
      const cells = cellsOf(row);
      return {
        section: row.section ?? null,
        bench: row.bench,
        metric: row.metric,
        figure: row.figure ?? null,
        baseline: row.baselineFigure ?? null,
        unit: row.unit ?? null,
        ratio: row.figure !== undefined && row.baselineFigure ? row.figure / row.baselineFigure : null,
        goal: typeof row.goal === 'object' ? row.goal : null,
        goal_text: cells.goal,
        pass: cells.pass,
        shown: { figure: cells.figure, baseline: cells.baseline, ratio: cells.ratio },
        ...(row.skipped !== undefined ? { skipped: row.skipped } : {}),
        ...(row.error !== undefined ? { error: row.error } : {}),
      };
    }),
  };
}
