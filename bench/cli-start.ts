/** CLI start (issue 26): `whoami --json` and `agents list --json` against `node -e 0` plus one request. Placeholder until the main session's section lands. */
import type { BenchOptions } from './options.js';
import type { Row } from './table.js';

export async function cliStartBench(_opts: BenchOptions): Promise<Row[]> {
  return [];
}
