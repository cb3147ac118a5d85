import type { Db } from '../../store/db.js';
import { sessionStore, type TurnRow } from './store.js';

interface Pending {
  agentId: string;
  sessionId: string;
  sealed: Omit<TurnRow, 'idx'>;
  resolve(): void;
  reject(e: unknown): void;
}

/**
 * Commits the session turns of invokes that finish together in one transaction (a group commit).
 * Every invoke of an agent records a turn, and the commit was most of the cost of recording it:
 * under concurrent callers the turns that end in the same turn of the event loop now share one.
 *
 * A turn's promise resolves only after its transaction committed, and the invoke answers only
 * then, so an acknowledged turn is exactly as durable as before (WAL, synchronous=NORMAL: it
 * survives kill -9) and the caller's next turn of the session reads it. The group is written at
 * setImmediate: after the I/O callbacks of this loop iteration, with no timer to wait for, so a
 * lone caller waits for nothing. A group whose transaction fails is written again one turn per
 * transaction, so each turn fails or succeeds on its own, as before.
 */
export class TurnWriter {
  private queue: Pending[] = [];
  private scheduled = false;

  constructor(private readonly db: Db) {}

  /** Seals the turn now (a sealed store's 503 is thrown here) and resolves once it is committed. */
  append(agentId: string, sessionId: string, turn: Omit<TurnRow, 'idx'>): Promise<void> {
    const sealed = sessionStore.seal(this.db, agentId, turn);
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ agentId, sessionId, sealed, resolve, reject });
      if (this.scheduled) return;
      this.scheduled = true;
      setImmediate(() => this.flush());
    });
  }

  private flush(): void {
    this.scheduled = false;
    const group = this.queue;
    this.queue = [];
    const write = (t: Pending) => sessionStore.write(this.db, t.agentId, t.sessionId, t.sealed);
    if (group.length > 1) {
      try {
        this.db.transaction(() => group.forEach(write))();
        for (const t of group) t.resolve();
        return;
      } catch {
        // One turn's failure (its agent deleted meanwhile) must not fail the others: one by one below.
      }
    }
    for (const t of group) {
      try {
        this.db.transaction(() => write(t))();
        t.resolve();
      } catch (e) {
        t.reject(e);
      }
    }
  }
}
