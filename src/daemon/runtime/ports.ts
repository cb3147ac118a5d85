import { createServer } from 'node:net';

/**
 * Hands out loopback ports for instances from a configured range. A port is taken only after
 * a trial bind succeeds, so a port some other program holds is skipped; `release` returns it.
 */
export class PortAllocator {
  private readonly used = new Set<number>();
  private cursor: number;

  constructor(
    private readonly min: number,
    private readonly max: number,
  ) {
    // A random start: daemons sharing a machine would otherwise all hand out the range's first
    // ports at once, and between the trial bind and the workload's own bind another daemon's
    // workload could take the port (its /healthz would then answer for ours).
    this.cursor = min + Math.floor(Math.random() * (max - min + 1));
  }

  async take(): Promise<number> {
    const span = this.max - this.min + 1;
    for (let i = 0; i < span; i++) {
      const port = this.min + ((this.cursor - this.min + i) % span);
      if (this.used.has(port)) continue;
      this.used.add(port);
      if (await isFree(port)) {
        this.cursor = port + 1 > this.max ? this.min : port + 1;
        return port;
      }
      this.used.delete(port);
    }
    throw new Error(`no free workload port between ${this.min} and ${this.max}`);
  }

  release(port: number): void {
    this.used.delete(port);
  }

  inUse(): number[] {
    return [...this.used].sort((a, b) => a - b);
  }
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/**
 * One allocator per daemon for every area that runs instances (agents, MCP servers): two
 * allocators over the same range could hand out the same port between a trial bind and the
 * instance's own bind. Keyed by the daemon's workload settings (tests run several daemons).
 */
const shared = new WeakMap<object, PortAllocator>();

export function sharedPorts(w: { portMin: number; portMax: number }): PortAllocator {
  let p = shared.get(w);
  if (!p) shared.set(w, (p = new PortAllocator(w.portMin, w.portMax)));
  return p;
}
