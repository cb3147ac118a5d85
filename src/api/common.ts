import { z } from 'zod';

/** Error envelope of every non-2xx response (spec 1 §7). */
export const ErrorEnvelope = z.object({ error: z.string(), request_id: z.string().optional() });
export type ErrorEnvelope = z.infer<typeof ErrorEnvelope>;

export const PAGE_SIZE_DEFAULT = 50;
export const PAGE_SIZE_MAX = 200;

/**
 * Paging query of every list (spec 1 §4.1): page_size with alias limit, 1..200, rejected never
 * clamped. Kept as strings here: the daemon's paging helper parses and reports errors with the
 * spec's wording, so every area rejects bad values identically.
 */
export const PageQuery = z.object({
  page_size: z.string().optional(),
  limit: z.string().optional(),
  page_token: z.string().optional(),
});
export type PageQuery = z.infer<typeof PageQuery>;

export const Uuid = z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, 'must be a UUID');
export const Email = z
  .string()
  .trim()
  .toLowerCase()
  .max(254)
  .regex(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, 'must be an e-mail address');
export const Role = z.enum(['admin', 'member']);
export const PlatformRole = z.enum(['admin', 'user']);
export const Timestamp = z.string().describe('RFC 3339');

export const Ok = z.object({}).passthrough();
export const Note = z.string();

