import type { AreaContext } from '../../area.js';
import type { Db } from '../../store/db.js';
import { stmt } from '../../store/db.js';
import { TableChanges } from '../../store/table-changes.js';
import type { ProjectRow } from '../accounts/access.js';
import type { Principal } from '../auth/principal.js';
import { agentStore, type AgentRow } from './store.js';

/**
 * What every warm invoke reads and almost never changes: the caller's project (without
 * ?project=), the agent by name, and the agent by id for the supervisor's serving revision.
 * Each look-up was a SQLite read (with its file locks) on every invoke, about a fifth of the
 * daemon's CPU per invoke at one caller (docs/decisions/speed-daemon.md, "Third pass").
 *
 * A remembered answer is exactly what a read would give: any write to a table the look-ups read
 * (by any code path of this process: temporary triggers; by another process: data_version)
 * forgets every answer before the next look-up, a break-glass grant's end forgets a project
 * resolution that may have counted it, and nothing is remembered while a transaction is open (a
 * row it wrote could still be rolled back). Callers must not mutate the rows they get.
 */
const WATCHED = ['acct_users', 'acct_projects', 'acct_project_members', 'acct_org_members', 'agents_agents'] as const;

/** Answers remembered at most per kind; paths and names come from clients. */
const ENTRIES = 4096;

export class InvokeLookups {
  private readonly changes: TableChanges | undefined;
  private generation = -1;
  private readonly byName = new Map<string, AgentRow>();
  private readonly byId = new Map<string, AgentRow>();
  private readonly projects = new Map<string, { project: ProjectRow; validUntil: number }>();

  /** remembering false: every look-up reads (what a look-up made before the triggers exist gets). */
  constructor(
    private readonly ctx: AreaContext,
    remembering = true,
  ) {
    this.changes = remembering ? new TableChanges(ctx.db, WATCHED) : undefined;
  }

  /** Forgets everything when a watched table changed; says whether an answer read now may be remembered. */
  private fresh(): boolean {
    if (!this.changes) return false;
    const g = this.changes.current();
    if (g !== this.generation) {
      this.generation = g;
      this.byName.clear();
      this.byId.clear();
      this.projects.clear();
    }
    return !this.ctx.db.inTransaction;
  }

  agentByName(projectId: string, name: string): AgentRow | undefined {
    const remember = this.fresh();
    const key = `${projectId}\0${name}`;
    const known = this.byName.get(key);
    if (known) return known;
    const row = agentStore.byName(this.ctx.db, projectId, name);
    if (row && remember) put(this.byName, key, row);
    return row;
  }

  agentById(id: string): AgentRow | undefined {
    const remember = this.fresh();
    const known = this.byId.get(id);
    if (known) return known;
    const row = agentStore.byId(this.ctx.db, id);
    if (row && remember) put(this.byId, id, row);
    return row;
  }

  /**
   * The project an invoke without ?project= lands on for this caller (undefined: anonymous),
   * as `resolve` finds it. Only successful resolutions are remembered; a refusal is read again.
   */
  project(principal: Principal | undefined, gated: boolean, resolve: () => ProjectRow): ProjectRow {
    const remember = this.fresh();
    const key = `${gated ? 1 : 0}\0${callerKey(principal)}`;
    const known = this.projects.get(key);
    const now = this.ctx.clock.now();
    if (known && now < known.validUntil) return known.project;
    const project = resolve();
    if (remember) put(this.projects, key, { project, validUntil: breakGlassEnd(this.ctx.db, principal, now) });
    return project;
  }
}

/** Who the resolution depends on: the person, the service account or the workload's project. */
function callerKey(p: Principal | undefined): string {
  if (!p) return 'anonymous';
  if (p.kind === 'user') return `user\0${p.userId}`;
  if (p.kind === 'service_account') return `sa\0${p.serviceAccountId}\0${p.projectId}`;
  return `workload\0${p.projectId}\0${p.workload}`;
}

/**
 * Until when a person's resolution stands on time alone: the first end of a live break-glass
 * grant they hold (a grant's end changes which projects they have contents roles on, with no
 * write to any table). Other callers' resolutions depend on no time.
 */
function breakGlassEnd(db: Db, p: Principal | undefined, now: number): number {
  if (p?.kind !== 'user') return Infinity;
  const row = stmt(db, 'SELECT MIN(expires_at) AS end FROM acct_project_members WHERE user_id = ? AND break_glass = 1 AND expires_at > ?').get(p.userId, new Date(now).toISOString()) as { end: string | null };
  return row.end ? Date.parse(row.end) : Infinity;
}

function put<V>(m: Map<string, V>, key: string, value: V): void {
  if (m.size >= ENTRIES) m.delete(m.keys().next().value!);
  m.set(key, value);
}

const perDb = new WeakMap<Db, InvokeLookups>();

/** The look-ups of this daemon's database (one per connection: the triggers are the connection's). */
export function invokeLookups(ctx: AreaContext): InvokeLookups {
  let l = perDb.get(ctx.db);
  if (l) return l;
  // Temporary triggers created in a transaction would go with its rollback: then read directly.
  if (ctx.db.inTransaction) return new InvokeLookups(ctx, false);
  perDb.set(ctx.db, (l = new InvokeLookups(ctx)));
  return l;
}
