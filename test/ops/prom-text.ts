/**
 * A strict parser of the Prometheus text exposition format (0.0.4), written for the tests: the
 * daemon's output is produced by prom-client, so checking it with prom-client would prove
 * nothing. It throws on anything a Prometheus server would refuse: a malformed line, a sample of
 * an undeclared family, a duplicate series, a bad escape, a histogram whose buckets do not add up.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  help: string;
  samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

function parseValue(text: string, line: number | string): number {
  if (text === '+Inf' || text === 'Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  if (text === 'NaN') return NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) throw new Error(`line ${line}: bad value ${JSON.stringify(text)}`);
  return Number(text);
}

/** Reads `{a="x",b="y"}` starting at `s[i] === '{'`; returns the labels and the index after `}`. */
function parseLabels(s: string, i: number, line: number): { labels: Record<string, string>; end: number } {
  const labels: Record<string, string> = {};
  i++;
  for (;;) {
    if (s[i] === '}') return { labels, end: i + 1 };
    const eq = s.indexOf('=', i);
    if (eq < 0) throw new Error(`line ${line}: label without =`);
    const name = s.slice(i, eq).trim();
    if (!LABEL.test(name)) throw new Error(`line ${line}: bad label name ${JSON.stringify(name)}`);
    if (name in labels) throw new Error(`line ${line}: label ${name} twice`);
    if (s[eq + 1] !== '"') throw new Error(`line ${line}: label value not quoted`);
    let j = eq + 2;
    let value = '';
    for (;;) {
      const c = s[j];
      if (c === undefined) throw new Error(`line ${line}: unterminated label value`);
      if (c === '"') break;
      if (c === '\\') {
        const n = s[j + 1];
        if (n === '\\') value += '\\';
        else if (n === '"') value += '"';
        else if (n === 'n') value += '\n';
        else throw new Error(`line ${line}: bad escape \\${n}`);
        j += 2;
        continue;
      }
      value += c;
      j++;
    }
    labels[name] = value;
    i = j + 1;
    if (s[i] === ',') i++;
    else if (s[i] !== '}') throw new Error(`line ${line}: expected , or } after a label`);
  }
}

/** The family a sample name belongs to (histogram and summary samples carry suffixes). */
function familyOf(name: string, families: Map<string, Family>): Family | undefined {
  if (families.has(name)) return families.get(name);
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (!name.endsWith(suffix)) continue;
    const f = families.get(name.slice(0, -suffix.length));
    if (f && (f.type === 'histogram' || (f.type === 'summary' && suffix !== '_bucket'))) return f;
  }
  return undefined;
}

export function parsePrometheusText(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const seen = new Set<string>();
  if (text.length && !text.endsWith('\n')) throw new Error('the exposition must end with a newline');
  text.split('\n').forEach((raw, idx) => {
    const line = idx + 1;
    if (raw === '') return;
    if (raw.startsWith('#')) {
      const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(raw);
      if (!m) return; // a plain comment
      const [, kind, name, rest] = m as unknown as [string, string, string, string];
      if (!NAME.test(name)) throw new Error(`line ${line}: bad metric name ${name}`);
      let f = families.get(name);
      if (!f) families.set(name, (f = { name, type: 'untyped', help: '', samples: [] }));
      if (kind === 'TYPE') {
        if (!['counter', 'gauge', 'histogram', 'summary', 'untyped'].includes(rest)) throw new Error(`line ${line}: bad type ${rest}`);
        if (f.samples.length) throw new Error(`line ${line}: TYPE of ${name} after its samples`);
        f.type = rest as Family['type'];
      } else f.help = rest;
      return;
    }
    const nameEnd = raw.search(/[{ ]/);
    if (nameEnd <= 0) throw new Error(`line ${line}: no value`);
    const name = raw.slice(0, nameEnd);
    if (!NAME.test(name)) throw new Error(`line ${line}: bad metric name ${name}`);
    let labels: Record<string, string> = {};
    let i = nameEnd;
    if (raw[i] === '{') ({ labels, end: i } = parseLabels(raw, i, line));
    if (raw[i] !== ' ') throw new Error(`line ${line}: expected a space before the value`);
    const parts = raw.slice(i + 1).split(' ');
    if (parts.length > 2 || (parts[1] !== undefined && !/^-?\d+$/.test(parts[1]))) throw new Error(`line ${line}: bad value or timestamp`);
    const value = parseValue(parts[0]!, `${line} (${name})`);
    const f = familyOf(name, families);
    if (!f) throw new Error(`line ${line}: sample ${name} of no declared family`);
    const key = `${name}${JSON.stringify(Object.entries(labels).sort())}`;
    if (seen.has(key)) throw new Error(`line ${line}: duplicate series ${key}`);
    seen.add(key);
    f.samples.push({ name, labels, value });
  });
  for (const f of families.values()) if (f.type === 'histogram') checkHistogram(f);
  return families;
}

/** Buckets cumulative and non-decreasing, ending in +Inf equal to _count, per label set. */
function checkHistogram(f: Family): void {
  const series = new Map<string, { buckets: Array<[number, number]>; count?: number }>();
  const keyOf = (labels: Record<string, string>) => JSON.stringify(Object.entries(labels).filter(([k]) => k !== 'le').sort());
  for (const s of f.samples) {
    const k = keyOf(s.labels);
    const e = series.get(k) ?? { buckets: [] };
    series.set(k, e);
    if (s.name.endsWith('_bucket')) {
      if (s.labels.le === undefined) throw new Error(`${f.name}: a bucket without le`);
      e.buckets.push([parseValue(s.labels.le, 0), s.value]);
    } else if (s.name.endsWith('_count')) e.count = s.value;
  }
  for (const [k, e] of series) {
    const sorted = [...e.buckets].sort((a, b) => a[0] - b[0]);
    if (sorted.at(-1)?.[0] !== Infinity) throw new Error(`${f.name}${k}: no +Inf bucket`);
    for (let i = 1; i < sorted.length; i++) if (sorted[i]![1] < sorted[i - 1]![1]) throw new Error(`${f.name}${k}: buckets decrease`);
    if (sorted.at(-1)![1] !== e.count) throw new Error(`${f.name}${k}: +Inf bucket ${sorted.at(-1)![1]} differs from _count ${e.count}`);
  }
}

/** The value of one series (labels must match exactly those given), undefined when absent. */
export function valueOf(families: Map<string, Family>, family: string, sampleName: string, labels: Record<string, string>): number | undefined {
  const f = families.get(family);
  const want = JSON.stringify(Object.entries(labels).sort());
  return f?.samples.find((s) => s.name === sampleName && JSON.stringify(Object.entries(s.labels).sort()) === want)?.value;
}
