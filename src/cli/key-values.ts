import { UsageError } from '../client/errors.js';

/** Parses KEY=VALUE arguments (the value may contain '='). */
export function parseKeyValues(items: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of items) {
    const i = item.indexOf('=');
    if (i <= 0) throw new UsageError(`expected KEY=VALUE, got ${item}`);
    out[item.slice(0, i)] = item.slice(i + 1);
  }
  if (!Object.keys(out).length) throw new UsageError('give at least one KEY=VALUE');
  return out;
}
