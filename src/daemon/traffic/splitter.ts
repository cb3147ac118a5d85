/**
 * Smooth weighted round robin (nginx's upstream algorithm): every pick adds each target's weight
 * to its running score, takes the highest and subtracts the total from it. Over any run of 100
 * picks a 50/50 split serves exactly 50 and 50, interleaved (A B A B ...), with no randomness to
 * make a short run lopsided; a 1 % target gets exactly one request in each hundred.
 */
export class Splitter {
  private readonly entries: { revision: string; weight: number; score: number }[];
  private readonly total: number;

  constructor(routes: { revision: string; percent: number }[]) {
    const merged = new Map<string, number>();
    for (const r of routes) if (r.percent > 0) merged.set(r.revision, (merged.get(r.revision) ?? 0) + r.percent);
    this.entries = [...merged].map(([revision, weight]) => ({ revision, weight, score: 0 }));
    this.total = this.entries.reduce((n, e) => n + e.weight, 0);
  }

  next(): string | undefined {
    let best: (typeof this.entries)[number] | undefined;
    for (const e of this.entries) {
      e.score += e.weight;
      if (!best || e.score > best.score) best = e;
    }
    if (best) best.score -= this.total;
    return best?.revision;
  }

  /** Same targets and weights (a re-apply keeps the rotation's position). */
  sameAs(other: Splitter): boolean {
    return this.entries.length === other.entries.length && this.entries.every((e, i) => e.revision === other.entries[i]!.revision && e.weight === other.entries[i]!.weight);
  }
}
