import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** What a later daemon needs to stop an instance this one started. */
export interface LedgerEntry {
  id: string;
  driver: 'process' | 'docker';
  pid?: number;
  container?: string;
  /** The door a root daemon runs on the host in a container's namespace (its own process group). */
  doorPid?: number;
}

/**
 * The data plane's record of running instances (docs/decisions/serverless.md, Data plane): one
 * small file per instance under `<home>/serverless/instances`, written synchronously when the
 * instance starts and removed when it stops, so a daemon killed with -9 leaves the list of what
 * it left running. The data plane keeps no table: it never reads the control plane's either.
 */
export class Ledger {
  private readonly dir: string;

  constructor(home: string) {
    this.dir = join(home, 'serverless', 'instances');
    mkdirSync(this.dir, { recursive: true });
  }

  add(e: LedgerEntry): void {
    writeFileSync(join(this.dir, `${e.id}.json`), JSON.stringify(e));
  }

  remove(id: string): void {
    rmSync(join(this.dir, `${id}.json`), { force: true });
  }

  /**
   * Set before the first container of this state directory is created: only then does a start-up
   * ask the engine for labelled leftovers (loading the Docker client costs a daemon that never ran
   * a container about 150 ms).
   */
  markDocker(): void {
    if (!this.usedDocker()) writeFileSync(join(this.dir, '..', 'docker-used'), '');
  }

  usedDocker(): boolean {
    return existsSync(join(this.dir, '..', 'docker-used'));
  }

  entries(): LedgerEntry[] {
    const out: LedgerEntry[] = [];
    for (const f of readdirSync(this.dir)) {
      if (!f.endsWith('.json')) continue;
      try {
        out.push(JSON.parse(readFileSync(join(this.dir, f), 'utf8')) as LedgerEntry);
      } catch {
        rmSync(join(this.dir, f), { force: true });
      }
    }
    return out;
  }
}

/** The label every serverless container carries: this daemon's state directory, hashed (several daemons share one engine). */
export const OWNER_LABEL = 'platform.serverless';
export const ownerValue = (home: string) => createHash('sha256').update(home).digest('hex').slice(0, 16);
