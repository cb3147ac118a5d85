import { vectorRoutes, type IndexView } from '../api/vector.js';
import type { ApiClient } from './api-client.js';

/**
 * Index views with live point counts. The API's points_count is refreshed about every five
 * minutes (spec 3 §2.1), so a list right after an upsert would show 0; the CLI asks each ready
 * index for its count (`:count`, one request per index, side by side) and puts it in
 * points_count and vectors_count (one vector per point). A pending index, or one whose count
 * cannot be read (deleted meanwhile), keeps the API's figure.
 */
export async function withLiveCounts(client: ApiClient, projectID: string, indexes: IndexView[]): Promise<IndexView[]> {
  const live = async (index: IndexView): Promise<IndexView> => {
    if (!index.ready) return index;
    try {
      const { count } = await client.call(vectorRoutes.count, { params: { projectID, name: index.name }, body: {} });
      return { ...index, points_count: count, vectors_count: count };
    } catch {
      return index;
    }
  };
  // A few at a time: a page holds up to 200 indexes and each count is a request.
  const out: IndexView[] = [];
  for (let i = 0; i < indexes.length; i += COUNTS_AT_ONCE) out.push(...(await Promise.all(indexes.slice(i, i + COUNTS_AT_ONCE).map(live))));
  return out;
}

const COUNTS_AT_ONCE = 8;
