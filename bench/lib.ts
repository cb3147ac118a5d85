/** Shared helpers for benchmarks: timing, percentiles and the table every bench prints. */
import { performance } from 'node:perf_hooks';

export interface Row {
  bench: string;
  metric: string;
  value: string;
  baseline?: string;
  ratio?: string;
  goal?: string;
}

export const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
};
export const median = (xs: number[]) => percentile(xs, 50);
export const ms = (x: number) => `${x.toFixed(1)} ms`;
export const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}x`;

export async function timeIt(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

export async function samples(n: number, fn: () => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push(await timeIt(fn));
  return out;
}

export function printTable(rows: Row[]): void {
  const cols: (keyof Row)[] = ['bench', 'metric', 'value', 'baseline', 'ratio', 'goal'];
  const widths = cols.map((c) => Math.max(c.length, ...rows.map((r) => String(r[c] ?? '').length)));
  const line = (vals: string[]) => `| ${vals.map((v, i) => v.padEnd(widths[i]!)).join(' | ')} |`;
  console.log(line(cols.map(String)));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const r of rows) console.log(line(cols.map((c) => String(r[c] ?? ''))));
}
