/** Output helpers: commands call these and never format by hand (Shopify cli-kit's renderTable idea). */

export interface Column<T> {
  header: string;
  get: (row: T) => unknown;
}

const cell = (v: unknown): string => {
  if (v === undefined || v === null || v === '') return '-';
  if (Array.isArray(v)) return v.length ? v.join(',') : '-';
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  return String(v);
};

/** A plain aligned table; an empty list prints a line saying so instead of bare headers. */
export function formatTable<T>(rows: T[], columns: Column<T>[], empty = 'nothing to show'): string {
  if (!rows.length) return empty;
  const cells = rows.map((r) => columns.map((c) => cell(c.get(r))));
  const widths = columns.map((c, i) => Math.max(c.header.length, ...cells.map((row) => row[i]!.length)));
  const line = (vals: string[]) => vals.map((v, i) => (i === vals.length - 1 ? v : v.padEnd(widths[i]!))).join('  ');
  return [line(columns.map((c) => c.header.toUpperCase())), ...cells.map(line)].join('\n');
}

/** Key-value block for one resource. */
export function formatFields(obj: Record<string, unknown>, order?: string[]): string {
  const keys = order ?? Object.keys(obj);
  const present = keys.filter((k) => obj[k] !== undefined);
  const width = Math.max(...present.map((k) => k.length));
  return present.map((k) => `${k.padEnd(width)}  ${cell(typeof obj[k] === 'object' && !Array.isArray(obj[k]) ? JSON.stringify(obj[k]) : obj[k])}`).join('\n');
}
