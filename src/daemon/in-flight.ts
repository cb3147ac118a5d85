/**
 * The deliveries a worker has in flight (the messaging push worker, the triggers deliverer): each
 * counted while it runs, its failure logged rather than left unhandled, and `after` called once it
 * settles (the worker's kick, so freed room is used at once).
 */
export class InFlight {
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly onError: (e: unknown) => void,
    private readonly after: () => void,
  ) {}

  get count(): number {
    return this.running.size;
  }

  track(p: Promise<void>): void {
    const q: Promise<void> = p
      .catch((e) => this.onError(e))
      .finally(() => {
        this.running.delete(q);
        this.after();
      });
    this.running.add(q);
  }

  /** Resolves once every delivery now in flight has settled. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.running]);
  }
}
