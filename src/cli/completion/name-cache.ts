import { mkdirSync, readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { writePrivateFile } from '../../client/files.js';

/**
 * Resource names fetched for completion, kept a short while on disk: one TAB after another (or
 * one per shell) should not ask the daemon again, and a name deleted a moment ago may still be
 * offered for at most the TTL (docs/decisions/completion-init.md).
 */
export const COMPLETION_TTL_MS = 20_000;

interface Entry {
  at: number;
  names: string[];
}

/** One file per context and project, holding one entry per list (`agent`, `subscription:orders`). */
export class NameCache {
  constructor(
    private readonly dir: string,
    private readonly now: () => number = Date.now,
    private readonly ttlMs = COMPLETION_TTL_MS,
  ) {}

  private file(context: string, project: string): string {
    return join(this.dir, `${encodeURIComponent(context)}~${encodeURIComponent(project)}.json`);
  }

  private read(file: string): Record<string, Entry> {
    try {
      return JSON.parse(readFileSync(file, 'utf8')) as Record<string, Entry>;
    } catch {
      return {};
    }
  }

  /** The names stored under `key` when they are younger than the TTL. */
  get(context: string, project: string, key: string): string[] | undefined {
    const entry = this.read(this.file(context, project))[key];
    if (!entry) return undefined;
    const age = this.now() - entry.at;
    return age >= 0 && age < this.ttlMs ? entry.names : undefined;
  }

  set(context: string, project: string, key: string, names: string[]): void {
    const file = this.file(context, project);
    const all = this.read(file);
    // Expired entries are dropped on every write so the file never grows with old topics.
    for (const [k, e] of Object.entries(all)) if (this.now() - e.at >= this.ttlMs) delete all[k];
    all[key] = { at: this.now(), names };
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    // Two shells completing at once must never read half a file: write aside, then rename.
    const tmp = `${file}.${process.pid}.tmp`;
    writePrivateFile(tmp, JSON.stringify(all));
    renameSync(tmp, file);
  }
}
