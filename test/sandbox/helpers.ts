import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { sandboxConfig, type SandboxConfig } from '../../src/daemon/services/sandbox/config.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';

/** A test daemon whose sandbox settings are the spec's defaults plus `over`. */
export function startSandboxDaemon(over: Partial<SandboxConfig> = {}, home?: string): Promise<TestDaemon> {
  return startTestDaemon({ sandbox: { ...sandboxConfig({}), ...over } }, { home });
}

export interface Reply {
  status: number;
  body: any;
  ms: number;
}

/** Calls the sandbox listener (no credential: it has none). */
export async function sbx(d: TestDaemon, method: string, path: string, body?: unknown, raw?: string): Promise<Reply> {
  const t0 = performance.now();
  const res = await fetch(d.sandboxUrl + path, {
    method,
    headers: body !== undefined || raw !== undefined ? { 'content-type': 'application/json' } : {},
    body: raw ?? (body === undefined ? undefined : JSON.stringify(body)),
  });
  const text = await res.text();
  let parsed: any = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // text
  }
  return { status: res.status, body: parsed, ms: performance.now() - t0 };
}

export const execute = (d: TestDaemon, body: Record<string, unknown>) => sbx(d, 'POST', '/v1/execute', body);

/** Waits until the pool reports `warm` ready sandboxes (an event the pool exposes, polled). */
export async function waitWarm(d: TestDaemon, warm: number, timeoutMs = 30_000): Promise<any> {
  const end = Date.now() + timeoutMs;
  let last: any;
  while (Date.now() < end) {
    last = (await sbx(d, 'GET', '/v1/pool')).body;
    if (last.warm >= warm) return last;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`pool never had ${warm} warm: ${JSON.stringify(last)}`);
}

/** Host processes whose command line contains every given word. */
export function hostProcesses(...words: string[]): number[] {
  const found: number[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const cmd = readFileSync(`/proc/${e}/cmdline`, 'utf8').split('\0').join(' ');
      if (words.every((w) => cmd.includes(w))) found.push(Number(e));
    } catch {
      // gone
    }
  }
  return found;
}

/** Waits (briefly) for host processes matching the words to be gone; returns what is left. */
export async function gone(words: string[], timeoutMs = 3_000): Promise<number[]> {
  const end = Date.now() + timeoutMs;
  let left = hostProcesses(...words);
  while (left.length && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 20));
    left = hostProcesses(...words);
  }
  return left;
}

/**
 * The escape attempts of issue 22, each of which must fail, in whichever mode the daemon's
 * sandbox runs. Registered as `it` blocks by each mode's test file.
 */
export function escapeAttempts(daemon: () => TestDaemon): void {
  it('cannot read a file of the state directory or of the home', async () => {
    const d = daemon();
    const stateFile = join(d.home, 'sandbox-probe.txt');
    writeFileSync(stateFile, 'state-secret');
    const homeFile = join(homedir(), `.platform-sandbox-probe-${process.pid}`);
    writeFileSync(homeFile, 'home-secret');
    try {
      for (const f of [stateFile, join(d.home, 'platform.db'), homeFile]) {
        const r = await execute(d, { code: `print(open(${JSON.stringify(f)}, "rb").read()[:40])` });
        expect(r.status).toBe(200);
        expect(r.body.exit_code).not.toBe(0);
        expect(r.body.stdout).toBe('');
        expect(r.body.stderr).toMatch(/FileNotFoundError|PermissionError/);
      }
      const listing = await execute(d, { code: `import os\nprint(os.path.exists(${JSON.stringify(d.home)}), os.path.exists(${JSON.stringify(homeFile)}))` });
      expect(listing.body.stdout).toBe('False False\n');
    } finally {
      rmSync(homeFile, { force: true });
    }
  });

  it("cannot open a socket to the daemon's port or the sandbox listener's port", async () => {
    const d = daemon();
    for (const port of [d.port, new URL(d.sandboxUrl).port, new URL(d.internalUrl).port]) {
      const r = await execute(d, {
        code: `import socket\ns = socket.socket()\ns.settimeout(3)\ntry:\n    s.connect(("127.0.0.1", ${port}))\n    print("CONNECTED")\nexcept OSError as e:\n    print("refused", type(e).__name__)`,
      });
      expect(r.status).toBe(200);
      expect(r.body.stdout).toMatch(/^refused /);
    }
    const out = await execute(d, { code: 'import urllib.request\nurllib.request.urlopen("http://example.com", timeout=3)' });
    expect(out.body.exit_code).not.toBe(0);
    expect(out.body.stderr).toMatch(/URLError|gaierror|Errno/);
  });

  it('cannot list or kill host processes', async () => {
    const d = daemon();
    const host = spawn('sleep', ['300.123'], { stdio: 'ignore' });
    try {
      const r = await execute(d, {
        code: `import os\npids = [p for p in os.listdir("/proc") if p.isdigit()]\nprint(len(pids))\nfor p in pids:\n    print(open("/proc/%s/cmdline" % p, "rb").read().replace(b"\\0", b" ").decode())\ntry:\n    os.kill(${host.pid}, 9)\n    print("KILLED")\nexcept OSError as e:\n    print("kill refused", type(e).__name__)`,
      });
      expect(r.status).toBe(200);
      const lines = r.body.stdout.trim().split('\n');
      // Only the sandbox's own few processes are visible: no daemon, no vitest, no host sleep.
      expect(Number(lines[0])).toBeLessThanOrEqual(4);
      expect(r.body.stdout).not.toMatch(/vitest|node|300\.123/);
      expect(r.body.stdout).toMatch(/kill refused/);
      expect(host.exitCode).toBeNull();
      expect(host.signalCode).toBeNull();
    } finally {
      host.kill();
    }
  });

  it('survives a fork bomb: the run ends at its deadline, nothing is left, the next run works', async () => {
    const d = daemon();
    const r = await execute(d, { code: 'import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass', timeout_s: 3 });
    expect(r.status).toBe(200);
    expect(r.body.exit_code).toBe(-1);
    expect(r.body.stderr).toBe('timed out after 3s');
    expect(r.ms).toBeLessThan(15_000);
    const next = await execute(d, { code: 'print("alive")' });
    expect(next.body.stdout).toBe('alive\n');
  });

  it('cannot allocate 2 GiB', async () => {
    const d = daemon();
    const r = await execute(d, { code: 'x = bytearray(2 * 1024 ** 3)\nprint("ALLOCATED", len(x))' });
    expect(r.status).toBe(200);
    expect(r.body.exit_code).not.toBe(0);
    expect(r.body.stdout).not.toMatch(/ALLOCATED/);
    expect(r.body.stderr).toMatch(/MemoryError|killed/);
  });

  it('cannot write 1 GiB of output: the run is stopped at 1 MiB a stream', async () => {
    const d = daemon();
    const r = await execute(d, { code: 'import sys\nb = b"x" * (1 << 20)\nfor _ in range(1024):\n    sys.stdout.buffer.write(b)\nprint("FINISHED", file=sys.stderr)' });
    expect(r.status).toBe(200);
    expect(r.body.exit_code).toBe(-1);
    expect(r.body.stdout.length).toBeLessThanOrEqual(1024 * 1024);
    expect(r.body.stderr).toMatch(/output passed 1 MiB/);
    expect(r.body.stderr).not.toMatch(/FINISHED/);
  });

  it('leaves no process behind after the run', async () => {
    const d = daemon();
    const r = await execute(d, {
      code: 'import os, subprocess\nsubprocess.Popen(["sleep", "301.77"], start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\nif os.fork() == 0:\n    os.setsid()\n    os.execvp("sleep", ["sleep", "302.77"])\nprint("spawned")',
    });
    expect(r.body.stdout).toBe('spawned\n');
    expect(r.body.exit_code).toBe(0);
    expect(await gone(['sleep', '301.77'])).toEqual([]);
    expect(await gone(['sleep', '302.77'])).toEqual([]);
  });

  it('kills a run past its deadline with the child process it left running', async () => {
    const d = daemon();
    const r = await execute(d, { code: 'import subprocess, time\nsubprocess.Popen(["sleep", "303.77"])\nprint("started", flush=True)\ntime.sleep(100)', timeout_s: 1 });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ exit_code: -1, stderr: 'timed out after 1s', stdout: 'started\n' });
    expect(r.body.duration_ms).toBeGreaterThanOrEqual(1000);
    expect(r.body.duration_ms).toBeLessThan(5000);
    expect(await gone(['sleep', '303.77'])).toEqual([]);
  });

  it('writes input files into a private working directory first; a path escaping it is 502', async () => {
    const d = daemon();
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    const r = await execute(d, {
      code: 'import os\nprint(os.getcwd(), open("data/in.txt").read(), open("/work/top.txt").read())\nopen("out.txt", "w").write("mine")\nprint(sorted(os.listdir(".")))',
      files: [
        { path: 'data/in.txt', content_b64: b64('nested') },
        { path: '/work/top.txt', content_b64: b64('top') },
      ],
    });
    expect(r.status).toBe(200);
    expect(r.body.stdout).toBe("/work nested top\n['data', 'out.txt', 'top.txt']\n");
    // The next sandbox's directory is fresh.
    const again = await execute(d, { code: 'import os\nprint(os.listdir("."))' });
    expect(again.body.stdout).toBe('[]\n');
    for (const path of ['../escape.txt', 'a/../../escape.txt', '/etc/passwd', '/work/../tmp/x']) {
      const bad = await execute(d, { code: 'print(1)', files: [{ path, content_b64: b64('x') }] });
      expect(bad.status, path).toBe(502);
      expect(bad.body.error).toMatch(/escapes the working directory/);
      expect(bad.body.request_id).toBeTruthy();
    }
  });
}
