import type { Health } from './model.js';

const HEALTH_COLORS: Record<Health, string> = { ok: 'green', busy: 'yellow', bad: 'red', idle: 'gray' };

/**
 * Text props for a health or an emphasis; empty without colour, so NO_COLOR and --no-color
 * produce no escape codes at all (no colour, no bold, no inverse).
 */
export const healthStyle = (color: boolean, h: Health) => (color ? { color: HEALTH_COLORS[h] } : {});
export const strong = (color: boolean) => (color ? { bold: true } : {});
export const faint = (color: boolean) => (color ? { dimColor: true } : {});
export const selectedStyle = (color: boolean, on: boolean) => (color && on ? { inverse: true } : {});

/** Cuts to `n` characters with an ellipsis, so fixed columns stay aligned. */
export function fit(s: string, n: number): string {
  if (n <= 0) return '';
  return s.length <= n ? s.padEnd(n) : `${s.slice(0, Math.max(0, n - 1))}…`;
}
