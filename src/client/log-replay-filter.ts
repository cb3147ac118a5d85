/** What the filter reads of a line: who logged it and when. */
interface LogLine {
  instance: string;
  ts: string;
}

/**
 * Drops the lines a new connection replays. The live route starts every connection with the
 * instance's recent lines (its ring), which history or an earlier connection already delivered.
 * Marks are per instance, never global: a blue-green deploy's new instance logs its start before
 * the old one logs its stop, and those earlier lines arrive after the stop line.
 * Per instance, the newest timestamp delivered and how many lines carried it are kept: a new
 * connection skips that instance's lines up to that mark and takes everything after it. Counting
 * (rather than a set of seen lines) keeps two identical lines printed in the same millisecond.
 */
export class ReplayFilter {
  private readonly marks = new Map<string, { ts: string; n: number }>();
  /** Per instance in this connection: lines at the mark skipped so far, or 'live' once past it. */
  private progress = new Map<string, number | 'live'>();

  constructor(private readonly maxInstances = 1000) {}

  /** A new connection (or history read) starts: its lines may replay what was delivered. */
  newConnection(): void {
    this.progress = new Map();
  }

  accept(l: LogLine): boolean {
    const mark = this.marks.get(l.instance);
    const progress = this.progress.get(l.instance);
    if (!mark || progress === 'live' || l.ts > mark.ts) return this.deliver(l, mark);
    if (l.ts < mark.ts) return false;
    const skipped = (progress ?? 0) + 1;
    this.progress.set(l.instance, skipped);
    return skipped > mark.n ? this.deliver(l, mark) : false;
  }

  private deliver(l: LogLine, mark: { ts: string; n: number } | undefined): boolean {
    this.progress.set(l.instance, 'live');
    // A clock step back inside one connection must not lower the mark (the next connection would replay).
    if (mark && l.ts < mark.ts) return true;
    if (mark && mark.ts === l.ts) mark.n++;
    else {
      this.marks.delete(l.instance);
      this.marks.set(l.instance, { ts: l.ts, n: 1 });
      // Oldest instance first in insertion order: the long-gone ones are forgotten first.
      if (this.marks.size > this.maxInstances) this.marks.delete(this.marks.keys().next().value!);
    }
    return true;
  }
}
