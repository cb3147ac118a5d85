import type { LogLine } from '../../api/agents.js';

export type { LogLine };

/** Where a logs view reads from: a workload's lines, oldest first, then new ones as they come. */
export interface LogSource {
  /** Calls onLine for every line (history first, then live, across redeploys) until the returned stop is called. */
  subscribe(onLine: (line: LogLine) => void, onError: (message: string) => void): () => void;
}
