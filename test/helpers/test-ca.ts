import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A private CA made with the openssl command line (P-256 keys: fast to make). */
export interface TestCa {
  dir: string;
  /** PEM file of the CA (what `context add --ca-cert` is given). */
  caFile: string;
  /** A server certificate for localhost and 127.0.0.1 the CA signs, as files (serial in hex). */
  issue(serial?: string): { cert: string; key: string };
}

export function testCa(dir = mkdtempSync(join(tmpdir(), 'platform-ca-'))): TestCa {
  const run = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  run('req', '-x509', ...ec, '-days', '2', '-subj', '/CN=platform test CA', '-keyout', 'ca.key', '-out', 'ca.pem');
  let n = 0;
  return {
    dir,
    caFile: join(dir, 'ca.pem'),
    issue(serial = (Date.now() * 1000 + n).toString(16)) {
      n++;
      const ext = join(dir, `ext${n}.cnf`);
      writeFileSync(ext, 'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n');
      run('req', '-new', ...ec, '-subj', '/CN=localhost', '-keyout', `s${n}.key`, '-out', `s${n}.csr`);
      run('x509', '-req', '-in', `s${n}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-set_serial', `0x${serial}`, '-days', '1', '-extfile', ext, '-out', `s${n}.pem`);
      return { cert: join(dir, `s${n}.pem`), key: join(dir, `s${n}.key`) };
    },
  };
}

/** A CA and one server certificate it signed, as PEM text (for an in-test https server). */
export function testCaWithPems(dir?: string): { caFile: string; cert: string; key: string } {
  const ca = testCa(dir);
  const files = ca.issue();
  return { caFile: ca.caFile, cert: readFileSync(files.cert, 'utf8'), key: readFileSync(files.key, 'utf8') };
}
