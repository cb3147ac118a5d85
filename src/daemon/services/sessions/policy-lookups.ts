import type { AreaContext } from '../../area.js';
import type { MemoryPolicy } from '../../../api/sessions.js';
import { TableChanges } from '../../store/table-changes.js';
import { policyOf } from './memory.js';

/** Policies remembered at most (one per agent invoked). */
const ENTRIES = 4096;

/**
 * The memory policy every invoke's turn reads (memorize allowed? memories to inject?),
 * remembered per agent until sess_memory_policy changes: its triggers and data_version forget
 * every answer before the next read (store/table-changes.ts), and nothing read inside an open
 * transaction is remembered. Callers must not mutate the policy they get.
 */
export class PolicyLookups {
  private changes: TableChanges | undefined;
  private generation = -1;
  private readonly known = new Map<string, MemoryPolicy>();

  constructor(private readonly ctx: AreaContext) {}

  of(agentId: string): MemoryPolicy {
    const db = this.ctx.db;
    // Created outside any transaction: temporary triggers created in one would go with its rollback.
    if (!this.changes && !db.inTransaction) this.changes = new TableChanges(db, ['sess_memory_policy']);
    if (!this.changes) return policyOf(this.ctx, agentId);
    const g = this.changes.current();
    if (g !== this.generation) {
      this.generation = g;
      this.known.clear();
    }
    const hit = this.known.get(agentId);
    if (hit) return hit;
    const policy = policyOf(this.ctx, agentId);
    if (!db.inTransaction) {
      if (this.known.size >= ENTRIES) this.known.delete(this.known.keys().next().value!);
      this.known.set(agentId, policy);
    }
    return policy;
  }
}
