/**
 * `--since` values: a duration back from now (`5m`, `1h`, `2d`, `1h30m`, as `docker logs --since`
 * and `kubectl logs --since` take them, plus days) or an RFC 3339 time. Parsed on the client, so
 * the daemon only ever sees one RFC 3339 instant.
 */

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** The forms a usage error names. */
export const SINCE_FORMS = 'a duration such as 30s, 5m, 1h, 2d or 1h30m, or an RFC 3339 time such as 2026-01-02T15:04:05Z';

const DURATION_RE = /^(\d+(\.\d+)?[smhd])+$/;
const RFC3339_RE = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** Milliseconds of a duration like `5m`, `1h30m` or `1.5h`; undefined when it is not one or is zero. */
export function parseDurationMs(text: string): number | undefined {
  const t = text.trim();
  if (!DURATION_RE.test(t)) return undefined;
  let total = 0;
  for (const m of t.matchAll(/(\d+(?:\.\d+)?)([smhd])/g)) total += Number(m[1]) * UNIT_MS[m[2]!]!;
  total = Math.round(total);
  return total > 0 && Number.isSafeInteger(total) ? total : undefined;
}

/**
 * The instant a `--since` value names, or undefined when it is neither form. An RFC 3339 time must
 * carry its offset (a bare date or a local time would depend on the machine's zone) and exist on
 * the calendar (2026-02-30 is refused, not rolled into March).
 */
export function parseSince(text: string, now: number = Date.now()): Date | undefined {
  const t = text.trim();
  const ms = parseDurationMs(t);
  if (ms !== undefined) return new Date(now - ms);
  if (!RFC3339_RE.test(t)) return undefined;
  const at = Date.parse(t.replace(' ', 'T'));
  if (!Number.isFinite(at)) return undefined;
  // Date.parse rolls 02-30 over into March; the calendar date must read back the same in its own offset.
  const offset = /([+-])(\d{2}):(\d{2})$/.exec(t);
  const offsetMs = offset ? (offset[1] === '-' ? -1 : 1) * (Number(offset[2]) * 60 + Number(offset[3])) * 60_000 : 0;
  if (new Date(at + offsetMs).toISOString().slice(0, 10) !== t.slice(0, 10)) return undefined;
  return new Date(at);
}
