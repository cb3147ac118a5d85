import { execa, execaSync } from 'execa';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliSandbox } from '../helpers/cli.js';

/**
 * The CLI's secrets in a real keychain: a session D-Bus with gnome-keyring's Secret Service, as a
 * Linux desktop has. The local sign-in's API key and a cache's password go there, not to the
 * state directory's 0600 files, and later commands read them back from it. (Without a keychain,
 * the files: test/cli/credentials.test.ts and test/cache/cli.test.ts.)
 */
const hasKeyring = ['dbus-daemon', 'gnome-keyring-daemon', 'secret-tool', 'redis-server'].every((bin) => execaSync('sh', ['-c', `command -v ${bin}`], { reject: false }).exitCode === 0);

const keyringHome = mkdtempSync(join(tmpdir(), 'platform-keyring-'));
const pids: number[] = [];
let bus: Record<string, string> = {};
let sb: ReturnType<typeof cliSandbox>;

/** What the Secret Service holds for a service name (secret-tool prints one block per item). */
async function secrets(service: string): Promise<string> {
  const r = await execa('secret-tool', ['search', '--all', 'service', service], { env: { ...process.env, ...bus }, reject: false });
  return r.stdout + r.stderr;
}

describe.skipIf(!hasKeyring)('secrets in the OS keychain (Secret Service on a session D-Bus)', { timeout: 180_000 }, () => {
  beforeAll(async () => {
    const dbus = await execa('dbus-daemon', ['--session', '--fork', '--print-address=1', '--print-pid=1']);
    const [address, pid] = dbus.stdout.trim().split('\n');
    pids.push(Number(pid));
    bus = { DBUS_SESSION_BUS_ADDRESS: address!, HOME: keyringHome, XDG_DATA_HOME: join(keyringHome, 'data') };
    // --unlock makes the login keyring with the password on stdin, as a desktop sign-in does.
    const keyring = await execa('gnome-keyring-daemon', ['--unlock', '--components=secrets'], { input: 'keyring-password', env: { ...process.env, ...bus } });
    const keyringPid = /GNOME_KEYRING_PID=(\d+)/.exec(keyring.stdout)?.[1];
    if (keyringPid) pids.push(Number(keyringPid));
    // The sandbox's PLATFORM_NO_KEYCHAIN is cleared: this CLI looks for a keychain.
    sb = cliSandbox({ ...bus, PLATFORM_NO_KEYCHAIN: '' });
  }, 60_000);
  afterAll(async () => {
    await sb?.stop();
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // already gone
      }
    }
    rmSync(keyringHome, { recursive: true, force: true });
  });

  it("the local sign-in's API key is kept in the keychain and read back from it", async () => {
    const first = await sb.run(['whoami', '--json']);
    expect(first.exitCode, first.stderr).toBe(0);
    expect(existsSync(join(sb.home, 'credentials.json'))).toBe(false);
    const held = await secrets('platform-cli');
    expect(held).toContain(`${sb.home}#local`);
    expect(held).toMatch(/"token":"(plat|svc)_/);
    const again = await sb.run(['whoami', '--json']);
    expect(again.exitCode, again.stderr).toBe(0);
    expect((again.json as { email: string }).email).toBe('admin@example.test');
  });

  it("a cache's password is kept in the keychain; connect uses it; rotate replaces it; delete removes it", async () => {
    const made = await sb.run(['cache', 'create', 'kc', '--wait']);
    expect(made.exitCode, made.stderr).toBe(0);
    expect(made.stderr).toContain('kept for `platform cache connect kc` in the keychain');
    expect(existsSync(join(sb.home, 'cache-credentials.json'))).toBe(false);
    const password = /^password\s+(\S+)$/m.exec(made.stdout)?.[1];
    expect(password).toBeTruthy();
    expect(await secrets('platform-cli-cache')).toContain(password!);

    const set = await sb.run(['cache', 'connect', 'kc', '--', 'SET', 'k', 'from-keychain']);
    expect(set.exitCode, set.stderr).toBe(0);
    expect(set.stdout.trim()).toBe('OK');

    const rotated = await sb.run(['cache', 'rotate', 'kc', '--json']);
    expect(rotated.exitCode, rotated.stderr).toBe(0);
    const next = (rotated.json as { credential: { password: string } }).credential.password;
    const held = await secrets('platform-cli-cache');
    expect(held).toContain(next);
    expect(held).not.toContain(password!);
    const get = await sb.run(['cache', 'connect', 'kc', '--', 'GET', 'k']);
    expect(get.stdout.trim()).toBe('from-keychain');

    expect((await sb.run(['cache', 'delete', 'kc', '--yes'])).exitCode).toBe(0);
    expect(await secrets('platform-cli-cache')).not.toContain(next);
    expect(existsSync(join(sb.home, 'cache-credentials.json'))).toBe(false);
  });
});
