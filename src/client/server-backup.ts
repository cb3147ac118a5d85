import { createWriteStream } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { operationsRoutes } from '../api/operations.js';
import type { ApiClient } from './api-client.js';
import { AbortError } from './errors.js';

export interface BackupResult {
  file: string;
  bytes: number;
}

/**
 * Asks the server for a backup archive and writes it to `file` (0600). The archive arrives under
 * a temporary name and is renamed only once complete, so a cut stream never leaves a file that
 * looks like a backup.
 */
export async function downloadBackup(client: ApiClient, file: string, timeoutSeconds: number): Promise<BackupResult> {
  const target = resolve(file);
  const partial = `${target}.partial`;
  const res = await client.request(operationsRoutes.backup.method, operationsRoutes.backup.path, { waitSeconds: timeoutSeconds, headers: { accept: 'application/gzip' } });
  if (!res.body) throw new AbortError('the server sent no archive');
  try {
    await pipeline(Readable.fromWeb(res.body as unknown as WebReadableStream), createWriteStream(partial, { mode: 0o600 }));
  } catch (e) {
    await rm(partial, { force: true });
    throw new AbortError(`the backup stream ended early: ${(e as Error).message}`, 'check the server log, then run the backup again');
  }
  await rename(partial, target);
  return { file: target, bytes: (await stat(target)).size };
}
