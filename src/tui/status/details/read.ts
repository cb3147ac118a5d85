/**
 * What every kind's details share: each read settles on its own, so one that fails is one line
 * inside the details ("versions: cannot read: ...") and the rest still shows.
 */

export type Read<T> = { ok: true; value: T } | { ok: false; error: string };

const errorText = (e: unknown) => (e instanceof Error ? e.message : String(e)).split('\n')[0]!;

/** Waits for a read without letting it reject. */
export async function settle<T>(read: Promise<T>): Promise<Read<T>> {
  try {
    return { ok: true, value: await read };
  } catch (e) {
    return { ok: false, error: errorText(e) };
  }
}

/** The line that stands for a read that failed. */
export const cannotRead = (what: string, r: { error: string }) => `${what}: cannot read: ${r.error}`;

/** The lines of a read: `render(value)`, or its error line. */
export function linesOf<T>(what: string, r: Read<T>, render: (value: T) => string[]): string[] {
  return r.ok ? render(r.value) : [cannotRead(what, r)];
}

/** First line of a message (multi-line build output, stack traces). */
export const oneLine = (s: string) => s.split('\n').map((l) => l.trim()).find(Boolean) ?? '';

/** `2026-11-27 10:11:12` from an RFC 3339 time: second precision, as the user reads it. */
export const when = (iso: string | undefined) => (iso ? iso.slice(0, 19).replace('T', ' ') : '-');

/** "3m ago", "in 2h": a time relative to now, for the next run or a last delivery. */
export function relative(iso: string, now = Date.now()): string {
  const s = Math.round((Date.parse(iso) - now) / 1000);
  const span = ageText(Math.abs(s));
  return s >= 0 ? `in ${span}` : `${span} ago`;
}

/** 42s, 5m, 3h12m, 2d4h: a duration in seconds, the two largest units. */
export function ageText(seconds: number): string {
  const d = Math.floor(seconds / 86_400);
  const h = Math.floor((seconds % 86_400) / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  if (d) return `${d}d${h ? `${h}h` : ''}`;
  if (h) return `${h}h${m ? `${m}m` : ''}`;
  if (m) return `${m}m`;
  return `${Math.floor(seconds)}s`;
}

export const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
