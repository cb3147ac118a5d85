/** Runs the sections of `npm run bench` one after another; a section that throws becomes one failed row. */
import { performance } from 'node:perf_hooks';
import type { BenchOptions } from './options.js';
import type { Row, RunInfo } from './table.js';

export type Section = (opts: BenchOptions) => Promise<Row[]>;

export async function runSections(
  sections: Array<[string, Section]>,
  opts: BenchOptions,
  only: string[],
  log: (line: string) => void,
): Promise<{ rows: Row[]; ran: RunInfo['sections'] }> {
  const rows: Row[] = [];
  const ran: RunInfo['sections'] = [];
  for (const [name, fn] of sections) {
    if (only.length && !only.includes(name)) continue;
    log(`running ${name} benchmarks${opts.quick ? ' (quick)' : ''}...`);
    const t = performance.now();
    try {
      const got = (await fn(opts)).map((r) => ({ ...r, section: name }));
      rows.push(...got);
      ran.push({ name, seconds: (performance.now() - t) / 1000, rows: got.length });
    } catch (e) {
      // The rows of the other sections are worth more than stopping here.
      const error = ((e as Error).message ?? String(e)).split('\n')[0]!.slice(0, 200);
      rows.push({ bench: name, metric: 'section failed', error, section: name });
      ran.push({ name, seconds: (performance.now() - t) / 1000, rows: 0, error });
      log(`${name} failed: ${(e as Error).stack ?? e}`);
    }
    log(`  ${name}: ${ran.at(-1)!.seconds.toFixed(1)} s`);
  }
  return { rows, ran };
}
