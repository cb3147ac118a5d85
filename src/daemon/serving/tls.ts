import { readFileSync } from 'node:fs';
import type { Server as HttpsServer } from 'node:https';
import type { Logger } from '../logger.js';
import { loadTls } from '../lazy/modules.js';

export interface TlsFiles {
  certFile: string;
  keyFile: string;
}

/** Reads the certificate chain and key, and checks that they make a usable context (they match). */
export function readTls(files: TlsFiles): { cert: Buffer; key: Buffer } {
  const pair = { cert: readFileSync(files.certFile), key: readFileSync(files.keyFile) };
  loadTls().createSecureContext(pair);
  return pair;
}

/**
 * SIGHUP: the certificate files are read again and new handshakes use them; connections already
 * open keep the context they were made with, so nothing is dropped. A pair that cannot be read or
 * does not match keeps the old one serving (a renewal written half-way must not take the server down).
 */
export function reloadTls(server: HttpsServer, files: TlsFiles, log: Logger): boolean {
  try {
    server.setSecureContext(readTls(files));
    log.info('tls certificate reloaded', { cert: files.certFile });
    return true;
  } catch (e) {
    log.error('tls certificate reload failed; the previous certificate still serves', { cert: files.certFile, error: (e as Error).message });
    return false;
  }
}
