import { execa, type ResultPromise } from 'execa';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hasTmux } from '../helpers/tmux.js';
import { cliSandbox } from '../helpers/cli.js';

/**
 * `platform dev` as a person uses it: in a real terminal (tmux), against the real daemon it
 * starts itself, with files edited on disk, keys pressed, and the served answer read through the
 * API. And once without a terminal (--json, stopped by SIGTERM), as a script would run it.
 */
const BIN = join(import.meta.dirname, '..', '..', 'bin', 'run.js');
if (!hasTmux) console.warn('SKIPPED: platform dev in a terminal: tmux is not installed');

const sb = cliSandbox({ PLATFORM_SCALE_TO_ZERO_SECONDS: '120' });
const work = mkdtempSync(join(tmpdir(), 'platform-dev-e2e-'));
const socket = `platform-dev-${process.pid}`;
const handler = (greeting: string) => `def handle(event):\n    name = event.get("message") or "world"\n    print(f"greeting {name}", flush=True)\n    return {"reply": f"${greeting} {name}"}\n`;

afterAll(async () => {
  if (hasTmux) spawnTmux(['kill-server']);
  await sb.stop();
  rmSync(work, { recursive: true, force: true });
});

function spawnTmux(args: string[]): string {
  try {
    return execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });
  } catch {
    return '';
  }
}

/** What the terminal shows, with its scrollback, wrapped lines joined. */
const pane = () => spawnTmux(['capture-pane', '-p', '-J', '-t', 'dev', '-S', '-500']);

/** Polls until `check` returns a value (never a fixed sleep); fails with what was last seen. */
async function until<T>(what: string, check: () => T | undefined | Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const got = await check();
    if (got !== undefined && got !== false) return got;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}; the pane shows:\n${pane()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const seen = (re: RegExp) => () => re.exec(pane()) ?? undefined;
const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

describe.skipIf(!hasTmux)('platform dev in a terminal', { timeout: 90_000 }, () => {
  it('deploys, redeploys on save, keeps the last good revision through a broken save, invokes, opens and quits', async () => {
    const dir = join(work, 'hello');
    mkdirSync(dir);
    writeFileSync(join(dir, 'main.py'), handler('hello'));
    writeFileSync(join(dir, 'payload.json'), '{"message": "from-payload"}\n');
    const opened = join(work, 'opened.txt');
    const browser = join(work, 'browser.sh');
    writeFileSync(browser, `#!/bin/sh\nprintf '%s' "$1" > ${quote(opened)}\n`);
    chmodSync(browser, 0o755);
    const env = Object.entries({ ...sb.env, BROWSER: browser })
      .map(([k, v]) => `${k}=${quote(v)}`)
      .join(' ');
    spawnTmux(['new-session', '-d', '-x', '120', '-y', '40', '-s', 'dev', `env ${env} node ${quote(BIN)} dev ${quote(dir)}; echo "[dev exited $?]"; stty -a | grep -o -- "-\\?icanon" | sed "s/^/[tty /;s/$/]/"; sleep 60`]);

    // It starts the daemon and says so, deploys, and prints both addresses and the keys.
    const [, url] = await until('the daemon', seen(/The local daemon is ready at (http:\/\/127\.0\.0\.1:\d+)/));
    expect(pane()).toMatch(/^Starting the local daemon/m);
    await until('the first deploy', seen(/hello: hello-00001 serving/));
    expect(pane()).toContain(`invoke: POST ${url}/v1/agents/hello/invoke`);
    const [, publicUrl] = /public: (http:\/\/hello-[a-z0-9]{6}\.apps\.localhost:\d+)/.exec(pane())!;
    expect(pane()).toMatch(/keys: o open · i invoke · r redeploy · l clear · q quit/);

    const login = await fetch(`${url}/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: sb.env.PLATFORM_ADMIN_EMAIL, password: sb.env.PLATFORM_ADMIN_PASSWORD }) });
    const { token } = (await login.json()) as { token: string };
    const reply = async () => {
      const res = await fetch(`${url}/v1/agents/hello/invoke`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: '{"message":"ada"}' });
      return res.ok ? ((await res.json()) as { reply: string }).reply : `HTTP ${res.status}`;
    };
    expect(await reply()).toBe('hello ada');

    // A save is a new revision, serving; the log stream marks it.
    writeFileSync(join(dir, 'main.py'), handler('hi'));
    await until('the edit to serve', async () => ((await reply()) === 'hi ada' ? true : undefined));
    await until('the redeploy line', seen(/hello: hello-00002 serving \(deployed, \d+\.\d\d s after saving main\.py\)/));
    await until('the revision marker', seen(/── hello-00002 ─+/));
    // The new instance's start, logged while the old one still served, is not lost.
    await until('the new instance\'s ready line', seen(/system: instance hello-00002-[0-9a-f]{6} ready/));

    // A broken save: its error's tail shows, and the previous revision still answers.
    writeFileSync(join(dir, 'main.py'), `${handler('broken')}def oops(:\n`);
    await until('the failure', seen(/✗ hello-00003 failed; hello-00002 keeps serving/), 45_000);
    expect(pane()).toMatch(/│ SyntaxError: /);
    expect(pane()).toMatch(/the whole build log: platform logs hello --build --revision hello-00003/);
    expect(await reply()).toBe('hi ada');

    // Fixed: served again.
    writeFileSync(join(dir, 'main.py'), handler('hey'));
    await until('the fix to serve', async () => ((await reply()) === 'hey ada' ? true : undefined));
    await until('the fixed revision', seen(/hello: hello-00004 serving/));

    // i invokes with payload.json and prints the answer; o hands the public address to $BROWSER.
    spawnTmux(['send-keys', '-t', 'dev', 'i']);
    await until('the invoke answer', seen(/invoke with payload\.json →\n\{\n\s+"reply": "hey from-payload"/));
    spawnTmux(['send-keys', '-t', 'dev', 'o']);
    expect(await until('the browser', () => (existsSync(opened) ? readFileSync(opened, 'utf8') : undefined))).toBe(publicUrl);
    expect(await fetch(publicUrl.replace(/hello-[a-z0-9]{6}\.apps\.localhost/, '127.0.0.1'), { headers: { host: new URL(publicUrl).host } }).then((r) => r.status)).toBeLessThan(500);

    // q quits, the process exits 0 and the terminal is cooked again.
    spawnTmux(['send-keys', '-t', 'dev', 'q']);
    await until('the exit', seen(/\[dev exited 0\]/), 10_000);
    // Raw mode is gone: the shell after it reads lines again (icanon, not -icanon).
    await until('the terminal mode', seen(/\[tty icanon\]/), 5_000);
  });
});

describe('platform dev without a terminal', { timeout: 60_000 }, () => {
  it('--json prints one event per line, redeploys on save, and stops on SIGTERM', async () => {
    const dir = join(work, 'quiet');
    mkdirSync(dir);
    writeFileSync(join(dir, 'index.mjs'), 'export async function handle(event) { return { reply: "one " + event.message }; }\n');
    const child: ResultPromise = execa('node', [BIN, 'dev', dir, '--json'], { env: sb.env, extendEnv: true, stdin: 'ignore', reject: false });
    const events: Array<Record<string, any>> = [];
    let rest = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      const parts = (rest + chunk.toString()).split('\n');
      rest = parts.pop()!;
      for (const p of parts) if (p.trim()) events.push(JSON.parse(p) as Record<string, any>);
    });
    const event = (pred: (e: Record<string, any>) => boolean) => () => events.find(pred);
    const first = await until('the first deploy event', event((e) => e.event === 'deployed'));
    expect(first).toMatchObject({ trigger: 'start', name: 'quiet', revision: 'quiet-00001', ms: expect.any(Number) });
    expect(events.find((e) => e.event === 'addresses')).toMatchObject({ name: 'quiet', invoke_url: expect.stringMatching(/\/v1\/agents\/quiet\/invoke$/), public_url: expect.stringMatching(/^http:\/\/quiet-/) });
    writeFileSync(join(dir, 'index.mjs'), 'export async function handle(event) { return { reply: "two " + event.message }; }\n');
    const second = await until('the redeploy event', event((e) => e.event === 'deployed' && e.revision === 'quiet-00002'));
    expect(second).toMatchObject({ trigger: 'save', path: 'index.mjs', since_save_ms: expect.any(Number) });
    // The log stream's lines carry their revision, including the new instance's start, which it
    // logged beside the serving one before that one's stop line.
    await until('the new revision\'s ready line', event((e) => e.event === 'log' && e.revision === 'quiet-00002' && /ready/.test(String(e.message))));
    // A broken save: a failed event naming what keeps serving, with the cause.
    writeFileSync(join(dir, 'index.mjs'), 'export async function handle(event) { return { reply: ; }\n');
    const failed = await until('the failed event', event((e) => e.event === 'failed'));
    expect(failed).toMatchObject({ trigger: 'save', name: 'quiet', revision: 'quiet-00003', serving_revision: 'quiet-00002' });
    expect(failed.error).toMatch(/SyntaxError/);
    child.kill('SIGTERM');
    const r = await child;
    expect(r.exitCode, String(r.stderr)).toBe(0);
    expect(events.at(-1)).toMatchObject({ event: 'stopped' });
    // stdout carried only events; the daemon notice went to stderr.
    expect(events.every((e) => typeof e.event === 'string')).toBe(true);
  });
});
