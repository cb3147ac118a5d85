import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface CaFiles {
  cert: string;
  key: string;
}

/** The local certificate authority's files in the state directory's keys/. */
export const caFiles = (keysDir: string): CaFiles => ({ cert: join(keysDir, 'cache-ca.crt'), key: join(keysDir, 'cache-ca.key') });

const openssl = (args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'pipe', 'pipe'] });

/**
 * Creates the daemon's local CA on first use (EC P-256, ten years). Clients trust exposed
 * instances by trusting this one certificate, as with a private CA of a managed service.
 * node:crypto can read certificates but not issue them, so the openssl CLI does the signing.
 */
export function ensureCa(keysDir: string): CaFiles {
  const ca = caFiles(keysDir);
  if (existsSync(ca.cert) && existsSync(ca.key)) return ca;
  mkdirSync(keysDir, { recursive: true, mode: 0o700 });
  openssl([
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-keyout', ca.key, '-out', ca.cert, '-days', '3650',
    '-subj', '/CN=platform local cache CA',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  chmodSync(ca.key, 0o600);
  return ca;
}

export interface ServerCert {
  cert: string;
  key: string;
}

/**
 * Issues a server certificate for one instance, signed by the local CA, for the names a client
 * may dial: the loopback address it is served on and the instance's own host name.
 */
export function issueServerCert(ca: CaFiles, dir: string, hostnames: string[]): ServerCert {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const out = { cert: join(dir, 'server.crt'), key: join(dir, 'server.key') };
  const csr = join(dir, 'server.csr');
  const ext = join(dir, 'server.ext');
  const san = ['IP:127.0.0.1', 'DNS:localhost', ...hostnames.map((h) => `DNS:${h}`)].join(',');
  writeFileSync(ext, `subjectAltName=${san}\nextendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature\n`);
  openssl(['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', out.key, '-out', csr, '-subj', `/CN=${hostnames[0] ?? 'localhost'}`]);
  chmodSync(out.key, 0o600);
  openssl(['x509', '-req', '-in', csr, '-CA', ca.cert, '-CAkey', ca.key, '-CAcreateserial', '-days', '825', '-out', out.cert, '-extfile', ext]);
  rmSync(csr, { force: true });
  rmSync(ext, { force: true });
  return out;
}

/** True when the certificate exists, was issued by this CA, and is not about to expire. */
export function certStillGood(ca: CaFiles, cert: string): boolean {
  try {
    const c = new X509Certificate(readFileSync(cert));
    const issuer = new X509Certificate(readFileSync(ca.cert));
    return c.checkIssued(issuer) && c.verify(issuer.publicKey) && Date.parse(c.validTo) - Date.now() > 7 * 86_400_000;
  } catch {
    return false;
  }
}
