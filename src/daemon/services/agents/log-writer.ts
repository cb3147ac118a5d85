import type { LogLine } from '../../../api/agents.js';
import { stmt, tx, type Db } from '../../store/db.js';

export interface LogWriterLimits {
  /** Lines waiting for the store, over all instances; past either bound new lines are refused. */
  maxPendingLines: number;
  maxPendingChars: number;
  /** Lines per transaction; the event loop runs between two batches. */
  batchLines: number;
}

export const DEFAULT_WRITER_LIMITS: LogWriterLimits = { maxPendingLines: 50_000, maxPendingChars: 32 * 1024 * 1024, batchLines: 500 };

/**
 * Persists captured log lines into agents_logs without ever holding the event loop for long:
 * lines wait in a bounded queue and are written in batches of `batchLines`, one transaction
 * each, with a setImmediate between batches so requests are served in between. When the queue
 * is full the writer refuses lines (the capture drops and counts them) instead of growing.
 */
export class LogWriter {
  private pending: { agentId: string; line: LogLine }[] = [];
  private head = 0;
  private chars = 0;
  private scheduled = false;

  constructor(
    private readonly db: Db,
    private readonly limits: LogWriterLimits = DEFAULT_WRITER_LIMITS,
  ) {}

  /** Queues a line; false when the store is behind (unless forced: system lines and drop counts). */
  offer(agentId: string, line: LogLine, force = false): boolean {
    const queued = this.pending.length - this.head;
    if (!force && (queued >= this.limits.maxPendingLines || this.chars + line.message.length > this.limits.maxPendingChars)) return false;
    this.pending.push({ agentId, line });
    this.chars += line.message.length;
    if (queued + 1 >= this.limits.batchLines) this.schedule();
    return true;
  }

  /** Starts writing soon (the periodic tick and a full batch both call this). */
  schedule(): void {
    if (this.scheduled || this.head >= this.pending.length) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.writeBatch(this.limits.batchLines);
      if (this.head < this.pending.length) this.schedule();
    });
  }

  /** Writes everything queued now (history reads and the daemon's stop). */
  flush(): void {
    while (this.head < this.pending.length) this.writeBatch(this.limits.batchLines * 10);
  }

  private writeBatch(max: number): void {
    if (!this.db.open) {
      this.pending = [];
      this.head = 0;
      this.chars = 0;
      return;
    }
    const end = Math.min(this.pending.length, this.head + max);
    const batch = this.pending.slice(this.head, end);
    this.head = end;
    if (this.head === this.pending.length) {
      this.pending = [];
      this.head = 0;
    } else if (this.head > 10_000 && this.head * 2 > this.pending.length) {
      // Compact now and then so the consumed front does not hold memory.
      this.pending = this.pending.slice(this.head);
      this.head = 0;
    }
    const ins = stmt(this.db, 'INSERT INTO agents_logs (agent_id, ts, revision, instance, stream, message) VALUES (?, ?, ?, ?, ?, ?)');
    tx(this.db, () => {
      for (const { agentId, line: l } of batch) {
        this.chars -= l.message.length;
        try {
          ins.run(agentId, l.ts, l.revision, l.instance, l.stream, l.message);
        } catch {
          // the agent was deleted meanwhile: its lines go with it
        }
      }
    });
  }
}

/**
 * Deletes lines older than `before` a few thousand at a time, yielding between chunks: a first
 * sweep after weeks of logs must not stall the API for seconds.
 */
export async function pruneLogsInChunks(db: Db, before: string, chunk = 5000): Promise<number> {
  let total = 0;
  for (;;) {
    if (!db.open) return total;
    const n = stmt(db, 'DELETE FROM agents_logs WHERE seq IN (SELECT seq FROM agents_logs WHERE ts < ? LIMIT ?)').run(before, chunk).changes;
    total += n;
    if (n < chunk) return total;
    await new Promise((r) => setImmediate(r));
  }
}
