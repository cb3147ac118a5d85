import { vectorRoutes } from '../../../api/vector.js';
import type { StatusTarget } from '../loaders.js';
import { linesOf, oneLine, settle, when } from './read.js';

/** Why an index is yellow: the view carries no message for it (it is ready), so the dashboard says it. */
const YELLOW = 'the search graph is being rebuilt; queries are exact scans meanwhile';

/**
 * An index: dimensions, distance, the live point count (`:count`: the view's points_count is
 * refreshed on a timer), status green/yellow with its message, storage and the payload indexes.
 */
export async function indexDetails(t: StatusTarget, name: string): Promise<string[]> {
  const params = { projectID: t.project, name };
  const [got, count] = await Promise.all([
    settle(t.client.call(vectorRoutes.get, { params })),
    settle(t.client.call(vectorRoutes.count, { params, body: {} })),
  ]);
  const out = linesOf(`index ${name}`, got, ({ index: i }) => {
    const status = i.collection_status ?? 'none';
    const why = i.message ?? (status === 'yellow' ? YELLOW : '');
    return [
      `index ${i.name}: ${i.state} · status ${status}${why ? `: ${oneLine(why)}` : ''}`,
      `dimensions ${i.dimensions} · distance ${i.distance} · quantization ${i.quantization.kind}${i.quantization.kind === 'none' ? '' : i.quantization.always_ram ? ' (always in RAM)' : ''}`,
      `storage vectors ${i.on_disk ? 'on disk' : 'in memory'} · payloads ${i.payload_on_disk ? 'on disk' : 'in memory'} · shards ${i.shards} · replicas ${i.replicas}`,
      `collection ${i.collection} · created ${when(i.created_at)}`,
    ];
  });
  // A pending index answers 409 to a count: its points are the view's (zero), not an error.
  const pending = got.ok && !got.value.index.ready;
  out.push(
    '',
    ...(pending
      ? [`live points ${got.value.index.points_count} (not ready yet)`]
      : linesOf('live points', count, (c) => [`live points ${c.count}${got.ok ? ` (the view's count, refreshed on a timer: ${got.value.index.points_count})` : ''}`])),
  );
  if (got.ok) {
    const pi = got.value.index.payload_indexes ?? [];
    out.push('', `payload indexes: ${pi.length ? '' : 'none (filters work without them)'}`.trimEnd(), ...pi.map((p) => `  ${p.field.padEnd(24)} ${p.type}`));
  }
  return out;
}
