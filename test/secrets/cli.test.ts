import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { execa } from 'execa';
import nodeVault from 'node-vault';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliSandbox } from '../helpers/cli.js';
import { ENV_PY, randomPortWindow } from './agent-fixture.js';

/** `platform secrets ...` with the built binary against the daemon it spawns (project `default`). */
// A port window of its own for the function it deploys (see ownWorkloadPorts).
const ports = randomPortWindow();
const cli = cliSandbox({ PLATFORM_WORKLOAD_PORT_MIN: String(ports.portMin), PLATFORM_WORKLOAD_PORT_MAX: String(ports.portMax), INVOKE_AUTH_REQUIRED: 'false' });
afterAll(() => cli.stop());
beforeAll(async () => {
  const r = await cli.run(['daemon', 'start', '--json']);
  expect(r.exitCode, r.stderr).toBe(0);
});

// Every step runs the built CLI as its own process; on a loaded machine each costs seconds.
describe('platform secrets', { timeout: 120_000 }, () => {
  it('set reads the value from stdin or a file, never from an argument', async () => {
    const first = await cli.run(['secrets', 'set', 'db-password', '--json'], { input: 'hunter2-from-stdin\n' });
    expect(first.exitCode, first.stderr).toBe(0);
    expect(first.json).toMatchObject({ name: 'db-password', version: 1, created: true });
    const human = await cli.run(['secrets', 'set', 'db-password'], { input: 'rotated-value' });
    expect(human.stdout).toBe('rotated db-password: version 2');
    const file = join(cli.home, 'value.pem');
    writeFileSync(file, '-----BEGIN KEY-----\nabc\n');
    const [fromFile, asArg, empty, badName] = await Promise.all([
      cli.run(['secrets', 'set', 'tls-key', '--from-file', file, '--json']),
      cli.run(['secrets', 'set', 'db-password', 'value-in-argv']),
      cli.run(['secrets', 'set', 'empty'], { input: '' }),
      // A name the API refuses (must start with a letter or digit): exit 1 with the API's message.
      cli.run(['secrets', 'set', '_bad', '--json'], { input: 'x' }),
    ]);
    expect(fromFile.json).toMatchObject({ version: 1 });
    expect(asArg.exitCode).toBe(2);
    expect(asArg.stderr).toMatch(/Unexpected argument/);
    expect(empty.exitCode).toBe(2);
    expect(empty.stderr).toMatch(/value is empty/);
    expect(badName.exitCode).toBe(1);
    expect(badName.json).toMatchObject({ status: 400 });
  });

  const hasScript = existsSync('/usr/bin/script');
  if (!hasScript) console.warn('SKIPPED: the hidden-prompt test needs util-linux `script` to give the CLI a terminal');
  it.skipIf(!hasScript)('set prompts for the value on a terminal without echoing it', async () => {
    const bin = join(import.meta.dirname, '..', '..', 'bin', 'run.js');
    const env = { PLATFORM_HOME: cli.home, PLATFORM_PORT: '0', PLATFORM_NO_KEYCHAIN: '1', NO_COLOR: '1' };
    const p = execa('script', ['-qfec', `node ${bin} secrets set prompted`, '/dev/null'], { env, extendEnv: true, reject: false, timeout: 60_000 });
    let out = '';
    let sent = false;
    p.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      // Type only once the prompt is up: input typed earlier would be echoed by the terminal itself.
      if (!sent && out.includes('value (hidden): ')) {
        sent = true;
        p.stdin!.write('typed-at-the-prompt\r');
      }
    });
    const r = await p;
    expect(r.exitCode, r.stdout).toBe(0);
    expect(r.stdout).toMatch(/created prompted: version 1/);
    expect(r.stdout).not.toContain('typed-at-the-prompt');
    expect((await cli.run(['secrets', 'reveal', 'prompted', '--reason', 'prompt test'])).stdout).toBe('typed-at-the-prompt');
  });

  it('list, get and versions show metadata only', async () => {
    // Independent reads: run the processes side by side (each costs a node start).
    const [list, json, get, versions, versionsHuman, missing] = await Promise.all([
      cli.run(['secrets', 'list']),
      cli.run(['secrets', 'list', '--json']),
      cli.run(['secrets', 'get', 'db-password']),
      cli.run(['secrets', 'versions', 'db-password', '--json']),
      cli.run(['secrets', 'versions', 'db-password']),
      cli.run(['secrets', 'get', 'nope']),
    ]);
    expect(list.exitCode, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/^NAME\s+VERSION\s+UPDATED\s+CREATED/);
    expect(list.stdout).toMatch(/db-password\s+2\s/);
    expect(list.stdout).not.toMatch(/hunter2|rotated-value/);
    expect(json.json.path_prefix).toMatch(/^secret\/data\/[a-z0-9]{6}\/$/);
    expect(get.stdout).toMatch(/current_version\s+2/);
    expect(get.stdout).toMatch(/used_by\s+nothing/);
    expect(versions.json.versions).toHaveLength(2);
    expect(versionsHuman.stdout).toMatch(/2 \(current\)/);
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toMatch(/secret nope not found/);
  });

  it('reveal prints only the value, needs --reason, and takes --version', async () => {
    const r = await cli.run(['secrets', 'reveal', 'db-password', '--reason', 'cli test']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toBe('rotated-value');
    expect((await cli.run(['secrets', 'reveal', 'db-password', '--reason', 'old', '--version', '1'])).stdout).toBe('hunter2-from-stdin');
    expect((await cli.run(['secrets', 'reveal', 'tls-key', '--reason', 'x', '--json'])).json.value).toBe('-----BEGIN KEY-----\nabc\n');
    const noReason = await cli.run(['secrets', 'reveal', 'db-password']);
    expect(noReason.exitCode).toBe(2);
  });

  it('token mints a read token that a Vault client uses', async () => {
    const one = await cli.run(['secrets', 'token', 'db-password', '--ttl', '99999', '--json']);
    expect(one.exitCode, one.stderr).toBe(0);
    expect(one.json.ttl_seconds).toBe(3600);
    const v = nodeVault({ endpoint: one.json.read.addr, token: one.json.token });
    expect((await v.read(one.json.read.path)).data.data.value).toBe('rotated-value');
    const all = await cli.run(['secrets', 'token']);
    expect(all.stdout).toMatch(/ttl_seconds\s+300/);
    expect(all.stdout).toMatch(/path\s+secret\/data\/[a-z0-9]{6}\/\n?/);
  });

  it('bind, bindings, apply and unbind drive a function deployed with the CLI', async () => {
    const dir = join(cli.home, 'worker');
    mkdirSync(dir);
    writeFileSync(join(dir, 'main.py'), ENV_PY);
    writeFileSync(join(dir, 'platform.json'), JSON.stringify({ framework: 'function', runtime: 'python' }));
    const deployed = await cli.run(['deploy', dir, '--name', 'worker']);
    expect(deployed.exitCode, deployed.stderr).toBe(0);
    // What the workload receives, read over HTTP (invoke is not under test here; a CLI process per check costs seconds).
    const { url } = JSON.parse(readFileSync(join(cli.home, 'daemon.json'), 'utf8')) as { url: string };
    const envOf = async () => {
      const res = await fetch(`${url}/v1/agents/worker/invoke?project=default`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message: 'env:DB_PASSWORD' }) });
      expect(res.status).toBe(200);
      return ((await res.json()) as { env: Record<string, string | null> }).env.DB_PASSWORD;
    };

    expect((await cli.run(['secrets', 'bindings'])).stdout).toBe('no bindings');
    const bound = await cli.run(['secrets', 'bind', 'worker', 'DB_PASSWORD', 'db-password', '--version', '1']);
    expect(bound.exitCode, bound.stderr).toBe(0);
    expect(bound.stdout).toBe('bound worker/DB_PASSWORD -> db-password@1');
    const list = await cli.run(['secrets', 'bindings']);
    expect(list.stdout).toMatch(/^AGENT\s+ENV\s+SECRET\s+PINNED TO\s+UPDATED\nworker\s+DB_PASSWORD\s+db-password\s+1\s/);
    expect((await cli.run(['secrets', 'bindings', 'worker', '--json'])).json).toMatchObject({ agent: 'worker', bindings: [{ env_name: 'DB_PASSWORD', pinned_to: '1' }] });
    expect(await envOf()).toBeNull();

    const applied = await cli.run(['secrets', 'apply', 'worker']);
    expect(applied.exitCode, applied.stderr).toBe(0);
    expect(applied.stdout).toMatch(/DB_PASSWORD\s+db-password\s+1\s+yes/);
    expect(applied.stdout).not.toContain('hunter2');
    expect(await envOf()).toBe('hunter2-from-stdin');

    // One unreadable value (its ciphertext corrupted in the daemon's database): nothing written, rows shown.
    const db = new Database(join(cli.home, 'platform.db'));
    db.pragma('busy_timeout = 5000');
    db.prepare(`UPDATE sec_versions SET ciphertext = zeroblob(40) WHERE name = 'db-password' AND version = 1`).run();
    db.close();
    const refused = await cli.run(['secrets', 'apply', 'worker']);
    expect(refused.exitCode).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toMatch(/ENV\s+SECRET\s+VERSION\s+APPLIED\s+ERROR\nDB_PASSWORD\s+db-password\s+1\s+no\s+.*integrity/);
    expect(refused.stderr).toMatch(/nothing was written/);
    expect(await envOf()).toBe('hunter2-from-stdin');

    const unbound = await cli.run(['secrets', 'unbind', 'worker', 'DB_PASSWORD']);
    expect(unbound.exitCode, unbound.stderr).toBe(0);
    expect(unbound.stdout).toBe('unbound worker/DB_PASSWORD; new revision rolled');
    expect(await envOf()).toBeNull();

    const ghosts = [['bind', 'ghost', 'DB_PASSWORD', 'db-password'], ['apply', 'ghost'], ['bindings', 'ghost']];
    const [again, ...ghostRuns] = await Promise.all([cli.run(['secrets', 'unbind', 'worker', 'DB_PASSWORD', '--json']), ...ghosts.map((args) => cli.run(['secrets', ...args]))]);
    ghostRuns.forEach((r, i) => {
      expect(r.exitCode, ghosts[i]!.join(' ')).toBe(1);
      expect(r.stderr).toMatch(/agent ghost not found/);
    });
    expect(again.json).toMatchObject({ status: 404, error: 'no binding of DB_PASSWORD on agent worker' });
  });

  it('delete asks for --yes without a terminal, then destroys the secret', async () => {
    const refused = await cli.run(['secrets', 'delete', 'tls-key']);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toMatch(/--yes/);
    const ok = await cli.run(['secrets', 'delete', 'tls-key', '--yes']);
    expect(ok.exitCode, ok.stderr).toBe(0);
    expect(ok.stdout).toBe('deleted tls-key');
    expect((await cli.run(['secrets', 'get', 'tls-key'])).exitCode).toBe(1);
  });

  it('no value reaches the daemon log, the workload logs or the database files', async () => {
    const walk = (dir: string): string[] =>
      readdirSync(dir).flatMap((n) => {
        const p = join(dir, n);
        return statSync(p).isDirectory() ? walk(p) : [p];
      });
    const files = [...walk(join(cli.home, 'logs')), ...['platform.db', 'platform.db-wal'].map((f) => join(cli.home, f))].filter((f) => existsSync(f));
    expect(files.some((f) => f.endsWith('daemon.log'))).toBe(true);
    for (const f of files) {
      const bytes = readFileSync(f);
      for (const value of ['hunter2-from-stdin', 'rotated-value', 'BEGIN KEY']) expect(bytes.includes(Buffer.from(value)), `${value} in ${f}`).toBe(false);
    }
  });
});
