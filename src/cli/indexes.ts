import { Args } from '@oclif/core';
import { readFileSync } from 'node:fs';
import { getContext } from '../client/contexts.js';
import { UsageError } from '../client/errors.js';
import type { IndexView } from '../api/vector.js';
import type { ApiClient } from '../client/api-client.js';
import type { Column } from './render.js';

/** Shared pieces of the `indexes` commands (spec 3 §4.1). */
export { projectFlag } from './project-flag.js';
export const nameArg = Args.string({ description: 'index name', required: true });

/**
 * The project id of a vector command. The vector API takes the project's UUID (spec 3 §7: a
 * malformed project id is a 400), so a slug or short from --project, PLATFORM_PROJECT or the
 * context (the local context defaults to `default`) is resolved through GET /v1/projects/{ref}.
 */
export async function indexProject(client: ApiClient, flag: string | undefined, contextName?: string): Promise<string> {
  const ctx = getContext(contextName);
  const ref = flag ?? ctx.project ?? (ctx.kind === 'local' ? 'default' : undefined);
  if (!ref) throw new UsageError('no project selected', 'pass --project SLUG (or set PLATFORM_PROJECT)');
  return client.projectId(ref);
}

/** Parses a JSON flag value, naming the flag when it is not JSON. */
export function jsonFlag(flag: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new UsageError(`--${flag} is not valid JSON: ${(e as Error).message}`);
  }
}

export const readText = (path: string) => (path === '-' ? readFileSync(0, 'utf8') : readFileSync(path, 'utf8'));

/**
 * Points from a file: a JSON array, a JSON object with `points`, or NDJSON (one point per line).
 * Reports the line of a broken NDJSON record.
 */
export function parsePointsFile(text: string): unknown[] {
  const trimmed = text.trim();
  if (!trimmed) throw new UsageError('the points file is empty');
  try {
    const doc = JSON.parse(trimmed) as unknown;
    if (Array.isArray(doc)) return doc;
    if (doc && typeof doc === 'object' && Array.isArray((doc as { points?: unknown }).points)) return (doc as { points: unknown[] }).points;
    return [doc];
  } catch {
    return trimmed.split('\n').flatMap((line, i) => {
      if (!line.trim()) return [];
      try {
        return [JSON.parse(line) as unknown];
      } catch (e) {
        throw new UsageError(`line ${i + 1} of the points file is not JSON: ${(e as Error).message}`);
      }
    });
  }
}

export const indexColumns: Column<IndexView>[] = [
  { header: 'name', get: (i) => i.name },
  { header: 'dimensions', get: (i) => i.dimensions },
  { header: 'distance', get: (i) => i.distance },
  { header: 'quantization', get: (i) => i.quantization.kind },
  { header: 'state', get: (i) => i.state },
  { header: 'points', get: (i) => i.points_count },
  { header: 'created', get: (i) => i.created_at },
];

export const INDEX_FIELD_ORDER = [
  'name',
  'state',
  'ready',
  'message',
  'dimensions',
  'distance',
  'quantization',
  'on_disk',
  'payload_on_disk',
  'shards',
  'replicas',
  'collection',
  'collection_status',
  'resource_path',
  'points_count',
  'vectors_count',
  'segments_count',
  'created_at',
];
