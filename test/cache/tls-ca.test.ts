import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { certStillGood, ensureCa, issueServerCert } from '../../src/daemon/services/cache/tls-ca.js';

/** The local CA of exposed instances (openssl CLI, read back with node:crypto). */
describe('cache local certificate authority', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cache-ca-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('creates the CA once, private key 0600, and issues server certificates for loopback and the host name', () => {
    const ca = ensureCa(join(dir, 'keys'));
    const first = readFileSync(ca.cert, 'utf8');
    expect(ensureCa(join(dir, 'keys')).cert).toBe(ca.cert);
    expect(readFileSync(ca.cert, 'utf8')).toBe(first);
    expect(statSync(ca.key).mode & 0o777).toBe(0o600);
    const caCert = new X509Certificate(first);
    expect(caCert.ca).toBe(true);

    const server = issueServerCert(ca, join(dir, 'tls'), ['main-abc123.cache.localhost']);
    expect(statSync(server.key).mode & 0o777).toBe(0o600);
    const cert = new X509Certificate(readFileSync(server.cert));
    expect(cert.checkIssued(caCert)).toBe(true);
    expect(cert.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(cert.checkHost('main-abc123.cache.localhost')).toBe('main-abc123.cache.localhost');
    expect(cert.checkHost('other.example')).toBeUndefined();
    expect(certStillGood(ca, server.cert)).toBe(true);
  });

  it('a certificate from another CA, or none, is not good and gets reissued', () => {
    const ca = ensureCa(join(dir, 'keys'));
    const other = ensureCa(join(dir, 'other-keys'));
    const foreign = issueServerCert(other, join(dir, 'foreign'), ['x.cache.localhost']);
    expect(certStillGood(ca, foreign.cert)).toBe(false);
    expect(certStillGood(ca, join(dir, 'missing.crt'))).toBe(false);
  });
});
