import { chmodSync, writeFileSync } from 'node:fs';

/** Writes a file only its owner can read (0600), tightening an existing file's mode too. */
export function writePrivateFile(file: string, data: string): void {
  writeFileSync(file, data, { mode: 0o600 });
  chmodSync(file, 0o600);
}
