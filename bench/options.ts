/** The options every section of `npm run bench` takes, and how run.ts reads them from its arguments. */

export interface BenchOptions {
  /** A smoke run: fewer samples, smaller data; what cannot be made short is skipped with a row saying so. */
  quick: boolean;
}

/** Flags without a value; any other `--name` takes the next argument as its value (`--n 100000`). */
export const BOOLEAN_FLAGS = ['--quick', '--vector-1m'];

/**
 * `npm run bench -- [--quick] [section ...] [--knob value ...]`: the sections named (all when none),
 * and quick mode. Knobs of single sections (`--n`, `--ops`, ...) stay in process.argv for them.
 */
export function parseBenchArgs(argv: string[], known: string[]): { quick: boolean; only: string[] } {
  const only: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a.startsWith('--')) {
      if (!BOOLEAN_FLAGS.includes(a) && !a.includes('=')) i++;
      continue;
    }
    if (!known.includes(a)) throw new Error(`unknown benchmark section "${a}" (sections: ${known.join(', ')})`);
    only.push(a);
  }
  return { quick: argv.includes('--quick'), only };
}

/** A section's own knob: `--name value` on the command line wins over the mode's default. */
export function knob(name: string, quickDefault: number, fullDefault: number, opts: BenchOptions): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : opts.quick ? quickDefault : fullDefault;
}

/** For a section run as a script on its own (`npx tsx bench/cache.ts --quick`). */
export const standaloneOptions = (): BenchOptions => ({ quick: process.argv.includes('--quick') });
