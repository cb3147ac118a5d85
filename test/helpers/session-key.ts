import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Runs `check` with the daemon's session signing key damaged, then removed (spec 3 §5: the
 * service then answers 503), passing what the error must say; restores the key afterwards.
 */
export async function withBrokenSessionKey(home: string, check: (reason: RegExp) => Promise<void>): Promise<void> {
  const file = join(home, 'keys', 'signing.key');
  const original = readFileSync(file);
  try {
    writeFileSync(file, 'not a key\n');
    await check(/does not hold a 32-byte base64 key/);
    rmSync(file);
    await check(/ENOENT/);
  } finally {
    writeFileSync(file, original, { mode: 0o600 });
  }
}
