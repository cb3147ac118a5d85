import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, statSync, watch, type FSWatcher } from 'node:fs';
import { dirname, join } from 'node:path';
import { writePrivate } from '../../bootstrap.js';
import type { Db } from '../../store/db.js';
import { unavailable } from '../../http/errors.js';
import { open, seal } from './crypto.js';
import * as store from './store.js';

export type StoreState = { state: 'unsealed'; key: Buffer } | { state: 'unconfigured' | 'sealed'; reason: string };

const KEY_CHECK_AAD = 'secrets-master-key-check';
const KEY_CHECK_TEXT = 'platform secret store master key';
/** How long a key checked with no change seen is trusted, at most, even if the watch missed one. */
const RECHECK_MS = 1000;

/**
 * The store's master key and seal state. On this headless daemon the key is a 0600 file,
 * `keys/secrets-master.key` (32 random bytes, base64), created on first start when the store holds
 * nothing. The file is checked again whenever it may have changed, so removing or moving it seals
 * the store at once and putting it back (or another key) is used at once, with no restart
 * (docs/decisions/secrets.md). A key that does not open the stored key check (the wrong file) is
 * treated as sealed, never as an empty store.
 */
export class MasterKey {
  readonly file: string;
  /** The key buffer last verified against the store's key check (the same object while the file is unchanged). */
  private verified?: Buffer;
  /** The file as last read, by its identity: a stat is enough to know it did not change. */
  private lastRead?: { id: string; key: Buffer | undefined };
  /** Watches the key's directory: any event there means the file may have changed. */
  private watcher?: FSWatcher;
  /** Whether the file may have changed since `lastRead` (no watcher, or the watcher saw an event). */
  private changed = true;
  private checkedAt = 0;

  constructor(
    private readonly db: Db,
    home: string,
    private readonly configured: boolean,
  ) {
    this.file = join(home, 'keys', 'secrets-master.key');
  }

  /** First start: creates the key and its check value, only while nothing is sealed under another key. */
  init(): void {
    if (!this.configured) return;
    const check = store.getMeta(this.db, 'key_check');
    if (!check && !existsSync(this.file) && !store.hasAnyCiphertext(this.db)) {
      writePrivate(this.file, randomBytes(32).toString('base64') + '\n');
    }
    if (!check && existsSync(this.file)) {
      const key = this.readFile();
      if (key) store.setMeta(this.db, 'key_check', seal(key, Buffer.from(KEY_CHECK_TEXT), KEY_CHECK_AAD).toString('base64'));
    }
  }

  state(): StoreState {
    if (!this.configured) return { state: 'unconfigured', reason: 'the project secret store is not configured (PLATFORM_SECRETS_STORE=off)' };
    const key = this.readFile();
    if (!key) return { state: 'sealed', reason: 'the project secret store is sealed: its master key is missing or unreadable' };
    if (this.verified !== key && !this.verified?.equals(key)) {
      const check = store.getMeta(this.db, 'key_check');
      try {
        if (!check || open(key, Buffer.from(check, 'base64'), KEY_CHECK_AAD).toString() !== KEY_CHECK_TEXT) throw new Error('mismatch');
      } catch {
        return { state: 'sealed', reason: 'the project secret store is sealed: the master key does not match the store' };
      }
      this.verified = key;
    }
    return { state: 'unsealed', key };
  }

  /** The key, or 503 when the store is unconfigured or sealed (never an empty answer). */
  require(): Buffer {
    const s = this.state();
    if (s.state !== 'unsealed') throw unavailable(s.reason);
    return s.key;
  }

  /**
   * The key file. An invoke of an agent seals its session turn, so this runs on the invoke path:
   * a stat per use was ~2% of the daemon's CPU per warm invoke. The key's directory is watched
   * (inotify) instead: an event there (the file created, removed, renamed, written, its mode
   * changed, or the directory itself moved) makes the next use stat it again, and the file is read
   * again only when its inode, size or times moved. The kernel queues the event when the change
   * happens, so a request read in a later turn of the event loop sees it; one whose bytes arrive in
   * the same wakeup as the event may still be served with the old key (one turn, well under a ms). Without a working watch every use stats the file as
   * before, and even with one a key unchanged for a second is checked again on its next use,
   * in case an event was lost (docs/decisions/speed-daemon.md, "Fourth pass").
   */
  private readFile(): Buffer | undefined {
    const now = performance.now();
    if (!this.changed && this.lastRead && now - this.checkedAt < RECHECK_MS) return this.lastRead.key;
    // Watching first: a change after the stat below is then an event, seen by the next use.
    this.changed = !this.watch();
    this.checkedAt = now;
    let id: string;
    try {
      const st = statSync(this.file, { bigint: true });
      id = `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
    } catch {
      this.lastRead = undefined;
      return undefined;
    }
    if (this.lastRead?.id === id) return this.lastRead.key;
    let key: Buffer | undefined;
    try {
      const read = Buffer.from(readFileSync(this.file, 'utf8').trim(), 'base64');
      key = read.length === 32 ? read : undefined;
    } catch {
      key = undefined;
    }
    this.lastRead = { id, key };
    return key;
  }

  /**
   * Whether the key's directory is watched (armed now if it was not). Any event ends the watch:
   * the next use arms a new one on the directory then at that path, so a directory moved away
   * and replaced is the one watched.
   */
  private watch(): boolean {
    if (this.watcher) return true;
    let w: FSWatcher;
    try {
      // Not persistent: the watch never keeps the daemon (or a test process) alive.
      w = watch(dirname(this.file), { persistent: false });
    } catch {
      return false;
    }
    const end = () => {
      this.changed = true;
      if (this.watcher === w) this.watcher = undefined;
      w.close();
    };
    w.on('change', end);
    w.on('error', end);
    this.watcher = w;
    return true;
  }
}
