import { createHmac, timingSafeEqual } from 'node:crypto';
import { PAGE_SIZE_DEFAULT, PAGE_SIZE_MAX, type PageQuery } from '../../api/common.js';
import { badRequest } from './errors.js';

export interface Page {
  size: number;
  offset: number;
  /** Identifies the list (route and scope); a token only continues the list that issued it. */
  list: string;
}

/**
 * Page tokens are `base64url(json).base64url(hmac)`: opaque to callers, tamper-evident through
 * the daemon's signing key, and bound to the list key so a token from another list is a 400.
 * An offset is enough for these lists, which are ordered by an immutable unique key.
 */
export class Pager {
  constructor(private readonly key: Buffer) {}

  parse(query: PageQuery, list: string): Page {
    const raw = query.page_size ?? query.limit;
    let size = PAGE_SIZE_DEFAULT;
    if (raw !== undefined) {
      size = /^\d+$/.test(raw) ? Number(raw) : NaN;
      if (!(size >= 1 && size <= PAGE_SIZE_MAX)) throw badRequest(`page_size must be between 1 and ${PAGE_SIZE_MAX}`);
    }
    let offset = 0;
    if (query.page_token) offset = this.verify(query.page_token, list);
    return { size, offset, list };
  }

  /** Token for the page after `page` when the store returned more rows than the page holds. */
  next(page: Page, hasMore: boolean): string | undefined {
    if (!hasMore) return undefined;
    return this.sign({ l: page.list, o: page.offset + page.size });
  }

  /** Applies a page to rows fetched with `limit: size + 1`, returning the rows and the next token. */
  slice<T>(page: Page, rows: T[]): { items: T[]; next_page_token?: string } {
    const hasMore = rows.length > page.size;
    const items = hasMore ? rows.slice(0, page.size) : rows;
    const token = this.next(page, hasMore);
    return token ? { items, next_page_token: token } : { items };
  }

  private sign(payload: { l: string; o: number }): string {
    const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
    return `${body}.${this.mac(body)}`;
  }

  private verify(token: string, list: string): number {
    const [body, mac] = token.split('.');
    const expected = body ? this.mac(body) : '';
    if (!body || !mac || mac.length !== expected.length || !timingSafeEqual(Buffer.from(mac), Buffer.from(expected))) {
      throw badRequest('page_token is invalid');
    }
    const payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as { l: string; o: number };
    if (payload.l !== list) throw badRequest('page_token was issued for a different list');
    return payload.o;
  }

  private mac(body: string): string {
    return createHmac('sha256', this.key).update(body).digest('base64url');
  }
}
