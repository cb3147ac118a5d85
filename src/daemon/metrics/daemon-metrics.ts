import type { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { GAUGES, type GaugeName, type GaugeSample, type WorkloadKind } from './gauges.js';

/** An area's gauges, read once per scrape. */
export interface MetricsReader {
  area: string;
  read(): GaugeSample[] | Promise<GaugeSample[]>;
}

interface Families {
  registry: Registry;
  requests: Counter<'method' | 'route' | 'status'>;
  duration: Histogram<'method' | 'route' | 'status'>;
  coldStarts: Counter<'kind'>;
  coldStartSeconds: Histogram<'kind'>;
  readFailures: Counter<'area'>;
  gauges: Map<GaugeName, Gauge<string>>;
}

const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const COLD_START_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60];
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
/** Label sets kept before prom-client loads; past this many distinct ones, new ones are dropped. */
const MAX_PENDING_SERIES = 10_000;

/**
 * Observations of one series made before prom-client loaded, kept as a count and a sum per bucket:
 * replayed as `count` observations of the bucket's mean, which lands in the same bucket and keeps
 * the sum exact, so memory stays bounded however long the daemon runs unscraped.
 */
interface Pending {
  labels: Record<string, string>;
  counts: number[];
  sums: number[];
}
/** A reader slower than this (a cache server that does not answer) is left out of the scrape. */
const READ_TIMEOUT_MS = 2_000;

/**
 * The daemon's metrics on a registry of its own (several daemons run in one test process).
 * prom-client costs a few hundred milliseconds to import, so it is loaded after start-up rather
 * than on the daemon's critical path; requests served before it loaded are queued and replayed.
 * Gauges are not kept up to date as things change: every scrape asks the areas' readers.
 */
export class DaemonMetrics {
  private families?: Families;
  private loading?: Promise<Families>;
  private readonly pendingRequests = new Map<string, Pending>();
  private readonly pendingColdStarts = new Map<string, Pending>();

  constructor(private readonly readers: () => readonly MetricsReader[]) {}

  /**
   * Loads prom-client and builds the registry (idempotent): at the first scrape, so a daemon
   * nobody scrapes never pays its ~8 MiB (docs/decisions/speed-daemon.md).
   */
  load(): Promise<Families> {
    return (this.loading ??= import('prom-client').then((prom) => {
      const registry = new prom.Registry();
      prom.collectDefaultMetrics({ register: registry, prefix: 'platform_' });
      const registers = [registry];
      const f: Families = {
        registry,
        requests: new prom.Counter({ name: 'platform_http_requests_total', help: 'HTTP requests by method, route template and status', labelNames: ['method', 'route', 'status'], registers }),
        duration: new prom.Histogram({ name: 'platform_http_request_duration_seconds', help: 'HTTP request duration, to the end of the response (streams included)', labelNames: ['method', 'route', 'status'], buckets: HTTP_BUCKETS, registers }),
        coldStarts: new prom.Counter({ name: 'platform_cold_starts_total', help: 'Workload instances started (launch to ready) by kind', labelNames: ['kind'], registers }),
        coldStartSeconds: new prom.Histogram({ name: 'platform_cold_start_seconds', help: 'Time from launching a workload instance to its first healthy answer', labelNames: ['kind'], buckets: COLD_START_BUCKETS, registers }),
        readFailures: new prom.Counter({ name: 'platform_metrics_read_failures_total', help: 'Scrapes where an area could not report its gauges in time', labelNames: ['area'], registers }),
        gauges: new Map(),
      };
      for (const [name, g] of Object.entries(GAUGES)) {
        f.gauges.set(name as GaugeName, new prom.Gauge({ name, help: g.help, labelNames: [...g.labels], registers }));
      }
      replay(this.pendingRequests, HTTP_BUCKETS, f.requests, f.duration);
      replay(this.pendingColdStarts, COLD_START_BUCKETS, f.coldStarts, f.coldStartSeconds);
      this.families = f;
      return f;
    }));
  }

  /** One finished request; `route` is the matched template (never the raw path) or a fixed name. */
  request(method: string, route: string, status: number, seconds: number): void {
    const m = METHODS.has(method) ? method : 'OTHER';
    const f = this.families;
    if (f) {
      const labels = { method: m, route, status: String(status) };
      f.requests.inc(labels);
      f.duration.observe(labels, seconds);
      return;
    }
    note(this.pendingRequests, `${m} ${status} ${route}`, () => ({ method: m, route, status: String(status) }), HTTP_BUCKETS, seconds);
  }

  /** One workload instance that became ready, `seconds` after its launch began. */
  coldStart(kind: WorkloadKind, seconds: number): void {
    const f = this.families;
    if (f) {
      f.coldStarts.inc({ kind });
      f.coldStartSeconds.observe({ kind }, seconds);
      return;
    }
    note(this.pendingColdStarts, kind, () => ({ kind }), COLD_START_BUCKETS, seconds);
  }

  /** The Prometheus text exposition of everything, gauges read from the areas now. */
  async render(): Promise<{ contentType: string; text: string }> {
    const f = await this.load();
    const readers = this.readers();
    const results = await Promise.all(readers.map((r) => withTimeout(r)));
    for (const g of f.gauges.values()) g.reset();
    results.forEach((samples, i) => {
      if (!samples) return f.readFailures.inc({ area: readers[i]!.area });
      for (const s of samples) f.gauges.get(s.name)?.set(s.labels, s.value);
    });
    // prom-client writes NaN as "Nan" (the event-loop lag gauges before their first sample), which
    // the text format does not allow: Prometheus and strict parsers reject the whole scrape.
    return { contentType: f.registry.contentType, text: (await f.registry.metrics()).replace(/ Nan$/gm, ' NaN') };
  }

}

function note(pending: Map<string, Pending>, key: string, labels: () => Record<string, string>, buckets: readonly number[], seconds: number): void {
  let p = pending.get(key);
  if (!p) {
    if (pending.size >= MAX_PENDING_SERIES) return;
    pending.set(key, (p = { labels: labels(), counts: new Array<number>(buckets.length + 1).fill(0), sums: new Array<number>(buckets.length + 1).fill(0) }));
  }
  let i = 0;
  while (i < buckets.length && seconds > buckets[i]!) i++;
  p.counts[i]!++;
  p.sums[i]! += seconds;
}

function replay(pending: Map<string, Pending>, buckets: readonly number[], counter: Counter<string>, histogram: Histogram<string>): void {
  for (const p of pending.values()) {
    let total = 0;
    p.counts.forEach((n, i) => {
      total += n;
      // Rounding must not carry the mean past the bucket's bound.
      const mean = i < buckets.length ? Math.min(p.sums[i]! / n, buckets[i]!) : p.sums[i]! / n;
      for (let k = 0; k < n; k++) histogram.observe(p.labels, mean);
    });
    counter.inc(p.labels, total);
  }
  pending.clear();
}

async function withTimeout(r: MetricsReader): Promise<GaugeSample[] | undefined> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      Promise.resolve().then(() => r.read()),
      new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), READ_TIMEOUT_MS))),
    ]);
  } catch {
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}
