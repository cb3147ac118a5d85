import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { platformHome } from './contexts.js';
import { writePrivateFile } from './files.js';

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
 * Secrets the CLI keeps between commands, by key: the OS keychain through @napi-rs/keyring,
 * falling back to a 0600 file of the state directory where no keychain answers (headless Linux
 * and CI answer AccessDenied), as gh and the Supabase CLI do. keytar is archived upstream and
 * needs libsecret headers to build. Entries are per state directory: two homes never share one.
 */
export class SecretStore<T> {
  private readonly file: string;

  constructor(
    private readonly service: string,
    fileName: string,
  ) {
    this.file = join(platformHome(), fileName);
  }

  async get(key: string): Promise<T | undefined> {
    const fromKeychain = await this.keychain((e) => e.getPassword(), key);
    if (typeof fromKeychain === 'string' && fromKeychain) return JSON.parse(fromKeychain) as T;
    return this.readFile()[key];
  }

  /** Where it went: the keychain, or the 0600 file when no keychain kept it. */
  async set(key: string, secret: T): Promise<'keychain' | 'file'> {
    // Some headless keyrings accept a write and then return nothing: trust only a read-back.
    const value = JSON.stringify(secret);
    const ok = await this.keychain((e) => (e.setPassword(value), e.getPassword() === value), key);
    if (ok === true) {
      this.removeFromFile(key);
      return 'keychain';
    }
    const all = this.readFile();
    all[key] = secret;
    mkdirSync(platformHome(), { recursive: true });
    writePrivateFile(this.file, JSON.stringify(all, null, 2) + '\n');
    return 'file';
  }

  async delete(key: string): Promise<void> {
    await this.keychain((e) => e.deletePassword(), key);
    this.removeFromFile(key);
  }

  private removeFromFile(key: string): void {
    const all = this.readFile();
    if (!(key in all)) return;
    delete all[key];
    if (Object.keys(all).length) writePrivateFile(this.file, JSON.stringify(all, null, 2) + '\n');
    else rmSync(this.file, { force: true });
  }

  private readFile(): Record<string, T> {
    if (!existsSync(this.file)) return {};
    try {
      return JSON.parse(readFileSync(this.file, 'utf8')) as Record<string, T>;
    } catch {
      return {};
    }
  }

  /** Runs a keychain operation; undefined when no keychain answers. Loaded lazily: it is a native module. */
  private async keychain<R>(op: (e: import('@napi-rs/keyring').Entry) => R, key: string): Promise<R | undefined> {
    if (!keychainExpected()) return undefined;
    try {
      const { Entry } = await import('@napi-rs/keyring');
      return op(new Entry(this.service, `${platformHome()}#${key}`));
    } catch {
      return undefined;
    }
  }
}
