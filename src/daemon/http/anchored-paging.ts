import type { PageQuery } from '../../api/common.js';
import type { Page, Pager } from './paging.js';

/**
 * Paging for newest-first lists that grow at the front (audit logs). A plain offset would shift
 * when rows are appended between pages, repeating rows; so the first page pins an anchor (the
 * newest key it saw) inside the list key, and later pages read only rows at or below it. The
 * anchor travels in the signed token, so it is tamper-evident like any page token.
 */
export function parseAnchored(pager: Pager, query: PageQuery, prefix: string): { page: Page; anchor?: number } {
  const listOf = (anchor: number) => `${prefix}@${anchor}`;
  if (!query.page_token) return { page: pager.parse(query, prefix) };
  const claimed = claimedList(query.page_token);
  const m = claimed?.startsWith(`${prefix}@`) ? /^(\d+)$/.exec(claimed.slice(prefix.length + 1)) : null;
  // An unreadable token or one from another list: let the pager report it with its usual wording.
  if (!m) return { page: pager.parse(query, listOf(-1)) };
  const anchor = Number(m[1]);
  return { page: pager.parse(query, listOf(anchor)), anchor };
}

/** Binds a first page to its anchor so the next token carries it. */
export const anchorPage = (page: Page, prefix: string, anchor: number): Page => ({ ...page, list: `${prefix}@${anchor}` });

/** The list key a token claims, read before its signature is checked (the pager checks it next). */
function claimedList(token: string): string | undefined {
  try {
    const body = token.split('.')[0] ?? '';
    const payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as { l?: unknown };
    return typeof payload.l === 'string' ? payload.l : undefined;
  } catch {
    return undefined;
  }
}
