/**
 * Binary sizes ("16Mi", "1Gi", "512Ki", plain bytes) and Go-style durations ("24h", "1h30m",
 * "90s", "500ms") as the messaging API writes them (spec 3 §2.3). Shared by daemon and CLI.
 */
const SIZE_UNITS: Record<string, number> = {
  '': 1,
  Ki: 1024,
  Mi: 1024 ** 2,
  Gi: 1024 ** 3,
  Ti: 1024 ** 4,
  k: 1000,
  K: 1000,
  M: 1000 ** 2,
  G: 1000 ** 3,
  T: 1000 ** 4,
};

/** Bytes of a quantity, or undefined when it is not one (or not a positive whole number of bytes). */
export function parseBytes(text: string): number | undefined {
  const m = /^(\d+)(Ki|Mi|Gi|Ti|k|K|M|G|T)?$/.exec(text.trim());
  if (!m) return undefined;
  const n = Number(m[1]) * SIZE_UNITS[m[2] ?? '']!;
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

/** The shortest exact binary spelling: 16777216 -> "16Mi", 1000 -> "1000". */
export function formatBytes(n: number): string {
  for (const u of ['Ti', 'Gi', 'Mi', 'Ki'] as const) {
    const f = SIZE_UNITS[u]!;
    if (n >= f && n % f === 0) return `${n / f}${u}`;
  }
  return String(n);
}

/** Readable size for humans (rounded): 1536 -> "1.5Ki". */
export function humanBytes(n: number): string {
  for (const u of ['Ti', 'Gi', 'Mi', 'Ki'] as const) {
    const f = SIZE_UNITS[u]!;
    if (n >= f) return `${Math.round((n / f) * 10) / 10}${u}`;
  }
  return `${n}B`;
}

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Milliseconds of a duration; "" and "0" mean none (0); undefined when invalid. */
export function parseDuration(text: string): number | undefined {
  const t = text.trim();
  if (t === '' || t === '0') return 0;
  if (!/^(\d+(\.\d+)?(ms|s|m|h))+$/.test(t)) return undefined;
  let total = 0;
  for (const m of t.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)) total += Number(m[1]) * DURATION_UNITS[m[2]!]!;
  total = Math.round(total);
  return Number.isSafeInteger(total) ? total : undefined;
}

/** Compact Go-like spelling: 5400000 -> "1h30m", 90000 -> "1m30s", 500 -> "500ms". */
export function formatDuration(ms: number): string {
  if (ms <= 0) return '';
  let out = '';
  let rest = ms;
  for (const [u, f] of [['h', 3_600_000], ['m', 60_000], ['s', 1000]] as const) {
    if (rest >= f) {
      out += `${Math.floor(rest / f)}${u}`;
      rest %= f;
    }
  }
  if (rest) out += `${rest}ms`;
  return out;
}
