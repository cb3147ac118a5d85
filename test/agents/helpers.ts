import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { Agent, FormData, fetch } from 'undici';
import { afterAll, beforeAll } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';

export interface Entry {
  name: string;
  content?: string;
  type?: 'file' | 'symlink' | 'hardlink';
  linkname?: string;
  /** Pads the file to this many bytes. */
  size?: number;
}

/**
 * Builds a .tar.gz with Python's tarfile, which writes any entry name or type we ask for:
 * the unsafe archives (symlinks, `../`, huge files) cannot be made with a well-behaved packer.
 */
const built = new Map<string, Buffer>();

export function archive(entries: Entry[] | Record<string, string>): Buffer {
  const list: Entry[] = Array.isArray(entries) ? entries : Object.entries(entries).map(([name, content]) => ({ name, content }));
  // Same entries, same bytes: python runs once per distinct archive (it blocks the event loop).
  const key = JSON.stringify(list);
  const hit = built.get(key);
  if (hit) return hit;
  const script = `
import io, json, sys, tarfile
spec = json.load(sys.stdin)
buf = io.BytesIO()
with tarfile.open(fileobj=buf, mode="w:gz", compresslevel=1) as t:
    for e in spec:
        info = tarfile.TarInfo(e["name"])
        kind = e.get("type", "file")
        if kind == "symlink":
            info.type = tarfile.SYMTYPE; info.linkname = e.get("linkname", "/etc/passwd"); t.addfile(info)
        elif kind == "hardlink":
            info.type = tarfile.LNKTYPE; info.linkname = e.get("linkname", "main.py"); t.addfile(info)
        else:
            data = e.get("content", "").encode()
            if e.get("size"): data = data.ljust(e["size"], b"#")
            info.size = len(data); info.mode = 0o644; t.addfile(info, io.BytesIO(data))
sys.stdout.buffer.write(buf.getvalue())
`;
  const out = execFileSync('python3', ['-c', script], { input: key, maxBuffer: 256 * 1024 * 1024 });
  built.set(key, out);
  return out;
}

export const HELLO_PY = `import os, sys

# Which process answered: under the sandbox every instance's shim has the same pid in its own
# PID namespace, so the pid alone cannot tell two instances apart.
BOOT = os.urandom(8).hex()

def handle(event):
    print("handling", event.get("message"), flush=True)
    if event.get("message") == "crash":
        os._exit(3)
    if event.get("message") == "raise":
        raise ValueError("boom")
    if event.get("message") == "env":
        return {k: os.environ.get(k, "") for k in ["AGENT_NAME", "PROJECT_SHORT", "SVC_API_URL", "SVC_PROJECT_ID", "SVC_PROJECT_KEY", "PLATFORM_REQUEST_TIMEOUT_SECONDS", "GREETING", "API_TOKEN", "MODEL_API_KEY", "CHAT_MODEL", "PORT"]}
    if event.get("message") == "status":
        return {"statusCode": 201, "created": True}
    if event.get("message") == "ids":
        return {"session_id": "mine", "reply": "kept"}
    return {"reply": "hello " + str(event.get("message")), "pid": os.getpid(), "boot": BOOT, "keys": sorted(event.keys())}
`;

/**
 * Deploys go over a connection of their own: archive() blocks the event loop while python runs,
 * and a pooled socket left idle through the block can be closed by the in-process daemon's
 * keep-alive timeout at the moment it is reused (ECONNRESET).
 */
const freshConnection = new Agent({ pipelining: 0 });

export async function deployForm(
  d: TestDaemon,
  token: string | undefined,
  fields: Record<string, string>,
  code?: Buffer,
  query = '',
): Promise<{ status: number; body: any }> {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  if (code) form.append('code', new Blob([new Uint8Array(code)]), 'code.tar.gz');
  const res = await fetch(`${d.url}/v1/agents${query}`, { method: 'POST', body: form, headers: token ? { authorization: `Bearer ${token}` } : {}, dispatcher: freshConnection });
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    // keep text
  }
  return { status: res.status, body };
}

/** Polls the agent until it reaches a state (or fails the test with its last view). */
export async function waitState(d: TestDaemon, token: string, name: string, want: string, project = '', timeoutMs = 20_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  let last: any;
  while (Date.now() < deadline) {
    const r = await d.api('GET', `/v1/agents/${name}${project ? `?project=${project}` : ''}`, { token });
    last = r.body;
    if (r.status === 200 && r.body.state === want) return r.body;
    if (r.status === 200 && r.body.state === 'failed' && want !== 'failed') break;
    await new Promise((res) => setTimeout(res, 25));
  }
  throw new Error(`agent ${name} did not reach ${want}: ${JSON.stringify(last)}`);
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The shims' fixtures: sample agents and the stand-in framework packages (fake-frameworks). */
export const SHIM_FIXTURES = join(import.meta.dirname, '..', 'shims', 'fixtures');

/**
 * The stand-in framework files whose paths start with `prefix` (`google/`, `langgraph/`,
 * `crewai/`), to ship beside an agent as a vendored dependency.
 */
export const fakeFrameworks = (prefix: string): Entry[] => walk(join(SHIM_FIXTURES, 'fake-frameworks')).filter((e) => e.name.startsWith(prefix));

/** The LangGraph sample agent with the shims' stand-in framework package beside it (as a vendored dependency). */
export function langgraphSample(): Entry[] {
  return [...walk(join(SHIM_FIXTURES, 'agent-langgraph')), ...fakeFrameworks('langgraph/')];
}

/** Every file under `root` (bytecode caches left out) as archive entries named relative to `base`. */
export function walk(root: string, base = root): Entry[] {
  return readdirSync(root).flatMap((n) => {
    const p = join(root, n);
    if (n === '__pycache__') return [];
    return statSync(p).isDirectory() ? walk(p, base) : [{ name: relative(base, p), content: readFileSync(p, 'utf8') }];
  });
}

/** A wheel to write by hand: its distribution name, version and files. */
export interface HandWheel {
  name: string;
  version: string;
  files: Entry[];
}

/**
 * Wheels written by hand (a wheel is a zip with its metadata beside the code), in a folder of
 * their own: the offline source PLATFORM_PIP_FIND_LINKS points at.
 */
export function wheelsFolder(wheels: HandWheel[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'wheels-'));
  const script = `
import base64, hashlib, json, re, sys, zipfile
for w in json.load(sys.stdin):
  stem = re.sub(r"[-_.]+", "_", w["name"]) + "-" + w["version"]
  dist = stem + ".dist-info"
  files = {f["name"]: f.get("content", "").encode() for f in w["files"]}
  files[dist + "/METADATA"] = ("Metadata-Version: 2.1\\nName: %s\\nVersion: %s\\n" % (w["name"], w["version"])).encode()
  files[dist + "/WHEEL"] = b"Wheel-Version: 1.0\\nGenerator: hand\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n"
  record = []
  for name, data in files.items():
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    record.append(f"{name},sha256={digest},{len(data)}")
  record.append(dist + "/RECORD,,")
  with zipfile.ZipFile(sys.argv[1] + "/" + stem + "-py3-none-any.whl", "w") as z:
    for name, data in files.items(): z.writestr(name, data)
    z.writestr(dist + "/RECORD", "\\n".join(record) + "\\n")
`;
  const r = spawnSync('python3', ['-c', script, dir], { input: JSON.stringify(wheels) });
  if (r.status !== 0) throw new Error(`could not write the wheels: ${r.stderr}`);
  // mkdtemp makes the folder 0700; a root daemon's sandboxed pip runs as nobody and must read it,
  // as it must any wheel folder an operator names (docs/decisions/agents.md).
  chmodSync(dir, 0o755);
  for (const f of readdirSync(dir)) chmodSync(join(dir, f), 0o644);
  return dir;
}

/** One small wheel, tinywheel 0.1, whose module says where it came from. */
export const wheelFolder = (): string =>
  wheelsFolder([{ name: 'tinywheel', version: '0.1', files: [{ name: 'tinywheel/__init__.py', content: "ANSWER = 'from a local wheel'\n" }] }]);

export const WHEEL_PY = `import tinywheel\n\ndef handle(event):\n    return {"reply": tinywheel.ANSWER}\n`;

/**
 * One in-process daemon for a test file (invoke auth off, so tests call invoke with the admin's
 * token only where they mean to): started before the file's tests, closed after them.
 */
export function useAgentDaemon(ready: (d: TestDaemon, adminToken: string) => void): void {
  let daemon: TestDaemon | undefined;
  beforeAll(async () => {
    daemon = await startTestDaemon({ invokeAuthRequired: false });
    ready(daemon, await daemon.adminToken());
  });
  afterAll(async () => daemon?.close());
}
