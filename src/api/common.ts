import { z } from 'zod';
import { lazySchema } from './lazy.js';

/** Error envelope of every non-2xx response (spec 1 §7). */
export const ErrorEnvelope = lazySchema(() => z.object({ error: z.string(), request_id: z.string().optional() }));
export type ErrorEnvelope = z.infer<typeof ErrorEnvelope>;

export const PAGE_SIZE_DEFAULT = 50;
export const PAGE_SIZE_MAX = 200;

/**
 * Paging query of every list (spec 1 §4.1): page_size with alias limit, 1..200, rejected never
 * clamped. Kept as strings here: the daemon's paging helper parses and reports errors with the
 * spec's wording, so every area rejects bad values identically.
 */
export const PageQuery = lazySchema(() => z.object({
  page_size: z.string().optional(),
  limit: z.string().optional(),
  page_token: z.string().optional(),
}));
export type PageQuery = z.infer<typeof PageQuery>;

export const Uuid = lazySchema(() => z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, 'must be a UUID'));

export const Role = lazySchema(() => z.enum(['admin', 'member']));
export const PlatformRole = lazySchema(() => z.enum(['admin', 'user']));
export const Timestamp = lazySchema(() => z.string().describe('RFC 3339'));

export const Ok = lazySchema(() => z.object({}).passthrough());
export const Note = lazySchema(() => z.string());


/**
 * Names and display names are shown in listings, logs and terminals: no control characters
 * (C0, DEL, C1: NUL, CR, LF, ESC...) and no lone UTF-16 surrogate (not encodable as UTF-8, so
 * it would be stored replaced or mangled). Refused with 400 rather than stored or silently fixed.
 */
export function printableTextProblem(s: string): string | undefined {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) return `must not contain control characters (found U+${c.toString(16).toUpperCase().padStart(4, '0')} at ${i})`;
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = s.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        i++;
        continue;
      }
      return `must not contain a lone UTF-16 surrogate (at ${i})`;
    }
    if (c >= 0xdc00 && c <= 0xdfff) return `must not contain a lone UTF-16 surrogate (at ${i})`;
  }
  return undefined;
}

/** The shared refinement: apply to every name, display name and key a caller chooses. */
export const printable = <T extends z.ZodType<string>>(schema: T) =>
  schema.superRefine((s, ctx) => {
    const problem = printableTextProblem(s);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

/** Strict base64 (RFC 4648 §4): standard alphabet, padded, canonical. */
export const isStrictBase64 = (s: string) =>
  s.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(s) && Buffer.from(s, 'base64').toString('base64') === s;

/** An e-mail address names a person: the same printable rule as every other name (NUL is not \s). */
export const Email = lazySchema(() => printable(
  z
    .string()
    .trim()
    .toLowerCase()
    .max(254)
    .regex(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, 'must be an e-mail address'),
));
