import { posix } from 'node:path';
import {
  SANDBOX_CALL_REPLY_LIMIT,
  SANDBOX_CALL_TIMEOUT_DEFAULT,
  SANDBOX_CALL_TIMEOUT_MAX,
  SANDBOX_EXECUTE_TIMEOUT_DEFAULT,
  SANDBOX_EXECUTE_TIMEOUT_MAX,
  type CallBody,
  type CallResult,
  type ExecuteBody,
  type ExecuteResult,
} from '../../../api/sandbox.js';
import { ApiError, badRequest } from '../../http/errors.js';
import type { Db } from '../../store/db.js';
import { toolTarget, type Backend } from './backends.js';
import { SANDBOX_WORKDIR } from './bwrap.js';
import { SandboxChild } from './child.js';
import { newSandboxId, type SandboxPool } from './pool.js';

export interface Deps {
  db: Db;
  /** How long a tool sandbox has to get ready (spec 2 §8: 110 s). */
  callReadyMs: number;
  pool: SandboxPool;
  backend: () => Backend | undefined;
  unavailableReason: () => string;
  /** Tool sandboxes running now, killed when the daemon stops. */
  calls: Set<SandboxChild>;
}

const badGateway = (message: string) => new ApiError(502, message);

/** Spec 2 §4.6: 0 or absent means the default; otherwise 1 to max, else 400. */
function timeoutOf(given: number | undefined, def: number, max: number): number {
  if (given === undefined || given === 0) return def;
  if (given < 1 || given > max) throw badRequest(`invalid field timeout_s: must be between 1 and ${max} seconds (0 or absent means ${def})`);
  return given;
}

/**
 * A file's place in the working directory, or a 502 (spec 2 §7: the runner refuses a path that
 * escapes it). Absolute paths are taken inside the working directory only.
 */
function filePath(path: string): string {
  const rel = path.startsWith(`${SANDBOX_WORKDIR}/`) ? path.slice(SANDBOX_WORKDIR.length + 1) : path;
  const norm = posix.normalize(rel);
  if (posix.isAbsolute(norm) || norm === '.' || norm === '..' || norm.startsWith('../') || path.includes('\0')) {
    throw badGateway(`runner returned an error: file path escapes the working directory: ${path}`);
  }
  return norm;
}

const BASE64 = /^[A-Za-z0-9+/\r\n]*={0,2}\s*$/;

/** POST /v1/execute: one run in a warm sandbox, destroyed afterwards. */
export async function execute(d: Deps, body: ExecuteBody): Promise<ExecuteResult> {
  const language = body.language === undefined || body.language === '' ? 'python' : body.language;
  if (language.toLowerCase() !== 'python') throw badRequest(`unsupported language: ${language} (only python)`);
  const timeout = timeoutOf(body.timeout_s, SANDBOX_EXECUTE_TIMEOUT_DEFAULT, SANDBOX_EXECUTE_TIMEOUT_MAX);
  const files = (body.files ?? []).map((f, i) => {
    if (!BASE64.test(f.content_b64)) throw badRequest(`invalid field files.${i}.content_b64: not base64`);
    return { path: filePath(f.path), content_b64: f.content_b64 };
  });
  const sandbox = await d.pool.acquire();
  try {
    const r = await sandbox.run({ code: body.code, files }, timeout);
    if (r.failed) throw badGateway(r.failed);
    return { sandbox_id: sandbox.id, stdout: r.stdout, stderr: r.stderr, exit_code: r.exit_code, duration_ms: r.duration_ms };
  } finally {
    void d.pool.release(sandbox);
  }
}

/**
 * The revision whose image is `image` (the agent's `image` field, its AGENT_IMAGE): read here
 * rather than through a hook because only its artifact is needed, read-only.
 */
function revisionArtifact(db: Db, image: string): string | undefined {
  const row = db.prepare('SELECT artifact FROM agents_revisions WHERE image = ? AND artifact IS NOT NULL ORDER BY seq DESC LIMIT 1').get(image) as { artifact: string } | undefined;
  return row?.artifact;
}

const tail = (b: Buffer) => b.toString('utf8').trim().split('\n').slice(-5).join('\n').slice(-1000);

/** POST /v1/call: one function of an agent's code in a one-use sandbox, no credentials, no pool. */
export async function call(d: Deps, body: CallBody): Promise<CallResult> {
  const timeout = timeoutOf(body.timeout_s, SANDBOX_CALL_TIMEOUT_DEFAULT, SANDBOX_CALL_TIMEOUT_MAX);
  const module = body.module || 'agent';
  const backend = d.backend();
  if (!backend) throw new ApiError(503, `could not start a tool sandbox: the code sandbox cannot isolate code here: ${d.unavailableReason()}`);
  const artifact = revisionArtifact(d.db, body.image);
  if (!artifact) throw new ApiError(503, `could not start a tool sandbox: no deployed agent revision has the image ${body.image} (use the agent's image field)`);
  const id = newSandboxId();
  const launch = backend.tool(id, toolTarget(artifact), module);
  if (typeof launch === 'string') throw new ApiError(503, `could not start a tool sandbox: ${launch}`);
  const t0 = performance.now();
  const child = new SandboxChild(launch, { stdout: SANDBOX_CALL_REPLY_LIMIT + 64, stderr: 64 * 1024 });
  d.calls.add(child);
  try {
    return await converse(child, id, body, timeout, t0, d.callReadyMs);
  } finally {
    await child.kill();
    d.calls.delete(child);
  }
}

type Line = { ready?: true; result?: unknown; error?: string; failed?: string };

async function converse(child: SandboxChild, id: string, body: CallBody, timeout: number, t0: number, readyMs: number): Promise<CallResult> {
  let overflow = false;
  child.onOverflow = (stream) => {
    if (stream !== 'stdout') return;
    overflow = true;
    void child.kill();
  };
  const lines = (): Line[] | undefined => {
    const text = child.stdout.take().toString('utf8');
    try {
      return text.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as Line);
    } catch {
      return undefined;
    }
  };
  // Ready: the first reply line, within 110 s (spec 2 §8).
  const readyOrExit = await new Promise<'ready' | 'exit' | 'late'>((resolve) => {
    const timer = setTimeout(() => resolve('late'), readyMs);
    child.onOutput = (stream) => {
      if (stream === 'stdout' && child.stdout.take().includes('\n')) {
        clearTimeout(timer);
        resolve('ready');
      }
    };
    void child.exited.then(() => {
      clearTimeout(timer);
      resolve(child.stdout.take().includes('\n') ? 'ready' : 'exit');
    });
  });
  child.onOutput = undefined;
  if (readyOrExit === 'late') throw new ApiError(503, `tool sandbox did not become ready within ${readyMs / 1000} seconds`);
  if (readyOrExit === 'exit') {
    const why = tail(child.stderr.take());
    throw new ApiError(503, `tool sandbox exited before ready (the image lacks the tool runner's python3, or it could not start)${why ? `: ${why}` : ''}`);
  }
  const first = lines()?.[0];
  if (!first) throw badGateway('invalid tool runner reply: not JSON');
  if (first.failed) throw badGateway(`tool execution failed: ${first.failed}`);
  let late = false;
  const timer = setTimeout(() => {
    late = true;
    void child.kill();
  }, timeout * 1000);
  child.send(JSON.stringify({ function: body.function, args: body.args ?? {} }) + '\n');
  await child.exited;
  clearTimeout(timer);
  const duration_ms = Math.round(performance.now() - t0);
  if (late) throw badGateway(`tool execution failed: timed out after ${timeout}s`);
  if (overflow) throw badGateway(`invalid tool runner reply: larger than ${SANDBOX_CALL_REPLY_LIMIT / 1024 / 1024} MiB`);
  const all = lines();
  if (!all) throw badGateway('invalid tool runner reply: not JSON');
  const reply = all[1];
  if (!reply) {
    const why = tail(child.stderr.take());
    throw badGateway(`tool execution failed: the runner exited without a reply${why ? `: ${why}` : ''}`);
  }
  if (reply.failed) throw badGateway(`tool execution failed: ${reply.failed}`);
  if (typeof reply.error === 'string') return { sandbox_id: id, duration_ms, error: reply.error };
  return { sandbox_id: id, ...('result' in reply && reply.result !== null ? { result: reply.result } : {}), duration_ms };
}
