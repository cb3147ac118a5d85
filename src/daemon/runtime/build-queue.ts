/**
 * The build queue: a FIFO of build ids with a fixed number of builder slots. Only the time a
 * build spends in a slot counts toward its time limit (spec 1 §3); the runner claims the build
 * in the database first, so a build failed or superseded while queued is skipped.
 */
export class BuildQueue {
  private readonly pending: string[] = [];
  private readonly running = new Set<string>();

  constructor(
    private readonly concurrency: number,
    private readonly runner: (buildId: string) => Promise<void>,
  ) {}

  enqueue(buildId: string): void {
    if (this.pending.includes(buildId) || this.running.has(buildId)) return;
    this.pending.push(buildId);
    this.pump();
  }

  /** Builds waiting for a slot, in order. */
  queued(): string[] {
    return [...this.pending];
  }

  busy(): number {
    return this.running.size;
  }

  private pump(): void {
    while (this.running.size < this.concurrency && this.pending.length) {
      const id = this.pending.shift()!;
      this.running.add(id);
      void this.runner(id)
        .catch(() => undefined)
        .finally(() => {
          this.running.delete(id);
          this.pump();
        });
    }
  }
}
