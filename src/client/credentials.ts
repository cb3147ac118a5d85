import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { platformHome } from './contexts.js';
import { writePrivateFile } from './files.js';

export interface StoredCredential {
  /** A session token or an API key (`svc_...`). */
  token: string;
  email?: string;
  /** Unix seconds; absent for API keys without expiry. */
  expiresAt?: number;
  /** A session's refresh token (single use: each refresh stores the next one). */
  refreshToken?: string;
  refreshExpiresAt?: number;
  /** The key the CLI made for itself on the local context (revoked by `platform logout`). */
  automatic?: boolean;
}

const SERVICE = 'platform-cli';

/**
 * On Linux the keychain is the Secret Service on the session D-Bus; without a session bus the
 * keyring crate falls back to a per-process kernel keyring that the next command cannot read,
 * so there the 0600 file is the honest store. PLATFORM_NO_KEYCHAIN forces the file anywhere.
 */
function keychainExpected(): boolean {
  if (process.env.PLATFORM_NO_KEYCHAIN) return false;
  return process.platform !== 'linux' || Boolean(process.env.DBUS_SESSION_BUS_ADDRESS);
}

/**
 * Credentials per context: the OS keychain through @napi-rs/keyring, falling back to a 0600
 * file in the state directory where no keychain answers (headless Linux and CI answer
 * AccessDenied). keytar is archived upstream and needs libsecret headers to build.
 */
export class CredentialStore {
  private readonly file = join(platformHome(), 'credentials.json');

  async get(context: string): Promise<StoredCredential | undefined> {
    const fromKeychain = await this.keychain((e) => e.getPassword(), context);
    if (typeof fromKeychain === 'string' && fromKeychain) return JSON.parse(fromKeychain) as StoredCredential;
    return this.readFile()[context];
  }

  async set(context: string, cred: StoredCredential): Promise<'keychain' | 'file'> {
    // Some headless keyrings accept a write and then return nothing: trust only a read-back.
    const value = JSON.stringify(cred);
    const ok = await this.keychain((e) => (e.setPassword(value), e.getPassword() === value), context);
    if (ok === true) {
      this.removeFromFile(context);
      return 'keychain';
    }
    const all = this.readFile();
    all[context] = cred;
    mkdirSync(platformHome(), { recursive: true });
    writePrivateFile(this.file, JSON.stringify(all, null, 2) + '\n');
    return 'file';
  }

  async delete(context: string): Promise<void> {
    await this.keychain((e) => e.deletePassword(), context);
    this.removeFromFile(context);
  }

  private removeFromFile(context: string): void {
    const all = this.readFile();
    if (!(context in all)) return;
    delete all[context];
    if (Object.keys(all).length) writePrivateFile(this.file, JSON.stringify(all, null, 2) + '\n');
    else rmSync(this.file, { force: true });
  }

  private readFile(): Record<string, StoredCredential> {
    if (!existsSync(this.file)) return {};
    try {
      return JSON.parse(readFileSync(this.file, 'utf8')) as Record<string, StoredCredential>;
    } catch {
      return {};
    }
  }

  /** Runs a keychain operation; undefined when no keychain answers. Loaded lazily: it is a native module. */
  private async keychain<T>(op: (e: import('@napi-rs/keyring').Entry) => T, context: string): Promise<T | undefined> {
    if (!keychainExpected()) return undefined;
    try {
      const { Entry } = await import('@napi-rs/keyring');
      return op(new Entry(SERVICE, `${platformHome()}#${context}`));
    } catch {
      return undefined;
    }
  }
}
