import type { IncomingMessage, ServerResponse } from 'node:http';
import { loadUndici, request } from '../../lazy/modules.js';
import { InvokeBody, LIMITS, type AgentConfig } from '../../../api/agents.js';
import { WIDGET_USER_PREFIX } from '../../../api/embed.js';
import type { EndUserOf } from '../../area.js';
import { ApiError, badRequest, unauthorized } from '../../http/errors.js';
import { parseJsonBody, readBody } from '../../http/body.js';
import { parseInput } from '../../http/validate.js';
import { sendJson } from '../../http/router.js';
import { randomString } from '../../ids.js';
import type { Principal } from '../auth/principal.js';
import { requireProjectAccess } from '../accounts/access.js';
import { invokeProject, resolveProject, unknownAgent } from './access.js';
import type { Deps } from './service.js';
import type { AgentRow } from './store.js';
import { invokeLookups } from './invoke-lookups.js';
import { clampTimeout } from './view.js';
import { rememberInvokeIds } from './invoke-record.js';

export const INVOKE_AUTH_MESSAGE =
  'invoke requires a credential on this platform (INVOKE_AUTH_REQUIRED is true): send Authorization: Bearer <token>';
/** Anonymous callers choosing their own session id need this many characters (spec 1 §4.12). */
export const ANON_SESSION_MIN = 24;

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'proxy-authorization', 'proxy-authenticate', 'host']);

/**
 * Resolves the agent an invoke targets and applies the data-plane gate (spec 1 §5): open unless
 * INVOKE_AUTH_REQUIRED, in which case a credential with a role on the project is needed.
 */
export function invokeTarget(d: Deps, principal: Principal | undefined, name: string, projectRef: string | undefined): AgentRow {
  const required = d.ctx.config.invokeAuthRequired;
  if (required && !principal) throw unauthorized(INVOKE_AUTH_MESSAGE);
  // With the gate on, the project is resolved with the caller's access (member required): its grants are read once.
  const resolve = () => (required && principal ? requireProjectAccess(resolveProject(d.ctx, principal, projectRef), 'member').project : invokeProject(d.ctx, principal, projectRef, required));
  // Without ?project= the answer depends on the caller alone and is remembered (invoke-lookups.ts);
  // a named project goes through the router's project gate, whose answer the resolution consumes.
  const project = projectRef === undefined ? invokeLookups(d.ctx).project(principal, required, resolve) : resolve();
  return servingAgent(d, name, project.id);
}

/** The agent by name in a project, which must have a revision to serve (no access check). */
export function servingAgent(d: Deps, name: string, projectId: string): AgentRow {
  const agent = invokeLookups(d.ctx).agentByName(projectId, name);
  if (!agent) throw unknownAgent(name);
  if (!agent.latest_revision) throw new ApiError(503, `agent ${name} has no serving revision yet (state ${agent.state}${agent.message ? `: ${agent.message.slice(0, 200)}` : ''})`, { 'Retry-After': '2' });
  return agent;
}

/** The fields of InvokeBody, the only ones an invoke keeps (its schema is the one list of them). */
let invokeFields: string[] | undefined;

/** Reads the invoke body: 1 MiB cap, JSON object, only the four fields survive (spec 1 §4.12). */
export async function readInvokeBody(req: IncomingMessage, principal: Principal | undefined, asEndUser?: EndUserOf): Promise<InvokeBody & { session_id: string; user_id: string }> {
  const raw = await readBody(req, LIMITS.invokeBytes);
  let parsed: unknown = {};
  if (raw.length) {
    parsed = parseJsonBody(raw);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw badRequest('invalid body: expected a JSON object');
  const src = parsed as Record<string, unknown>;
  const endUser = asEndUser?.(src);
  const kept: Record<string, unknown> = {};
  for (const k of (invokeFields ??= Object.keys(InvokeBody.shape))) if (k in src && !(endUser && k === 'user_id')) kept[k] = src[k];
  const body = parseInput(InvokeBody, kept, 'body');
  // The widget's end users own their sessions through a secret only the widget holds; an
  // anonymous caller naming one of them directly could otherwise continue their conversations.
  if (!principal && body.user_id?.startsWith(WIDGET_USER_PREFIX)) {
    throw badRequest(`user_id: ids starting with ${WIDGET_USER_PREFIX} belong to the widget's end users; an anonymous caller cannot use them`);
  }
  if (!principal && body.session_id !== undefined && body.session_id.length < ANON_SESSION_MIN) {
    throw badRequest(`session_id from an anonymous caller must be at least ${ANON_SESSION_MIN} unguessable characters; omit it and the platform generates one`);
  }
  const person = principal?.email && /^[A-Za-z0-9_.:@-]{1,128}$/.test(principal.email) ? principal.email : 'anonymous';
  const read = { ...body, session_id: body.session_id ?? randomString(32), user_id: endUser ? endUser : (body.user_id ?? person) };
  if (body.session_id === undefined) generatedSessions.add(read);
  return read;
}

/** Bodies whose session id the daemon generated (32 random characters): no earlier turn can exist. */
const generatedSessions = new WeakSet<object>();

/**
 * A serving instance for the agent, of the revision its traffic split picks for this request,
 * cold-starting one; a start that fails is a 503 naming why.
 */
export async function acquire(d: Deps, agent: AgentRow) {
  try {
    return await d.rt.supervisor.acquire(agent.id, d.rt.router.pick(agent));
  } catch (e) {
    if (e instanceof ApiError) throw e;
    throw new ApiError(503, `agent ${agent.name} could not start an instance: ${(e as Error).message}`.slice(0, 4000), { 'Retry-After': '2' });
  }
}

/** Reads an upstream body up to a cap; over the cap is a 502 (spec 1 §8.1). */
async function readCapped(body: AsyncIterable<Buffer> & { destroy(): void }, cap: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of body) {
    size += c.length;
    if (size > cap) {
      body.destroy();
      throw new ApiError(502, `upstream response exceeds ${cap} bytes`);
    }
    chunks.push(c);
  }
  return Buffer.concat(chunks);
}

function timeoutError(name: string, seconds: number): ApiError {
  return new ApiError(504, `agent ${name} did not answer within ${seconds} s (timeout_seconds)`);
}

function upstreamError(name: string, e: unknown, seconds: number, startSeconds = seconds): ApiError {
  if (e instanceof ApiError) return e;
  const { HeadersTimeoutError, BodyTimeoutError } = loadUndici().errors;
  if (e instanceof HeadersTimeoutError && startSeconds < seconds) {
    return new ApiError(504, `agent ${name} did not start answering within ${startSeconds} s (response_start_seconds)`);
  }
  if (e instanceof HeadersTimeoutError || e instanceof BodyTimeoutError || (e as Error).name === 'TimeoutError') return timeoutError(name, seconds);
  return new ApiError(502, `agent ${name} failed to answer: ${(e as Error).message}`);
}

/**
 * POST /v1/agents/{name}/invoke and /invoke/stream. Functions get the surviving fields as their
 * event and their JSON passes through with session and user ids filled only when absent and
 * the handler's statusCode as the status; agents' harness responses stream through unchanged.
 */
export async function invoke(d: Deps, principal: Principal | undefined, agent: AgentRow, req: IncomingMessage, res: ServerResponse, stream: boolean, asEndUser?: EndUserOf): Promise<void> {
  const body = await readInvokeBody(req, principal, asEndUser);
  const turn = d.ctx.hooks.agentSessions?.begin(agent, body, principal !== undefined, generatedSessions.has(body));
  rememberInvokeIds(res, body);
  const cfg = JSON.parse(agent.config) as AgentConfig;
  const seconds = clampTimeout(cfg.timeout_seconds);
  // Response start inherits the request timeout and never exceeds it (spec 1 §8.5).
  const startSeconds = Math.min(seconds, clampTimeout(cfg.response_start_seconds ?? seconds));
  const lease = await acquire(d, agent);
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(timeoutError(agent.name, seconds)), seconds * 1000);
  const clientGone = () => abort.abort(new Error('client went away'));
  res.on('close', clientGone);
  try {
    const path = agent.kind === 'function' ? '/' : stream ? '/invoke/stream' : '/invoke';
    let up;
    try {
      up = await request(`http://127.0.0.1:${lease.port}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...lease.headers },
        body: JSON.stringify({ ...body, ...turn?.context }),
        signal: abort.signal,
        headersTimeout: startSeconds * 1000,
        bodyTimeout: seconds * 1000,
      });
    } catch (e) {
      throw upstreamError(agent.name, abort.signal.reason ?? e, seconds, startSeconds);
    }
    if (agent.kind === 'function') {
      // The one body we must hold: ids are filled into the handler's JSON.
      let raw: Buffer;
      try {
        // A declared length over the cap is refused before a byte of it is read.
        if (Number(up.headers['content-length']) > LIMITS.upstreamBytes) {
          up.body.destroy();
          throw new ApiError(502, `upstream response exceeds ${LIMITS.upstreamBytes} bytes`);
        }
        raw = await readCapped(up.body, LIMITS.upstreamBytes);
      } catch (e) {
        throw upstreamError(agent.name, e, seconds);
      }
      let out: unknown;
      try {
        out = JSON.parse(raw.toString('utf8'));
      } catch {
        throw new ApiError(502, `function ${agent.name} answered with a body that is not JSON`);
      }
      if (out && typeof out === 'object' && !Array.isArray(out)) {
        const o = out as Record<string, unknown>;
        if (o.session_id === undefined) o.session_id = body.session_id;
        if (o.user_id === undefined) o.user_id = body.user_id;
      }
      await turn?.finishFunction(up.statusCode, out);
      if (stream) {
        res.statusCode = up.statusCode;
        res.setHeader('Content-Type', 'application/x-ndjson');
        res.end(JSON.stringify(out) + '\n');
      } else {
        sendJson(res, up.statusCode, out);
      }
      return;
    }
    const status = up.statusCode;
    await pipeUpstream(up, res, agent.name, LIMITS.upstreamBytes, stream ? 'application/x-ndjson' : undefined, abort.signal, turn && { tap: turn.tap, beforeEnd: () => turn.finishAgent(status, stream) });
  } finally {
    clearTimeout(timer);
    // Once answered there is nothing left to abort: the close of every finished response would
    // otherwise build an Error and signal undici for nothing (~3 % of the daemon's CPU per invoke).
    res.off('close', clientGone);
    lease.release();
  }
}

/**
 * Streams an upstream response to the client as it arrives, counting bytes: a declared length
 * over the cap is a 502 before anything is sent; an undeclared one is cut off at the cap. An
 * NDJSON stream that is cut (timeout, cap, upstream failure) ends with one last line
 * `{"error", "request_id"}` saying why, so a reader can tell a cut stream from a finished one;
 * other streams are cut by closing the connection.
 */
export async function pipeUpstream(
  up: { statusCode: number; headers: Record<string, string | string[] | undefined>; body: AsyncIterable<Buffer> & { destroy(): void } },
  res: ServerResponse,
  name: string,
  cap: number,
  contentType?: string,
  signal?: AbortSignal,
  /** Sees every chunk sent; beforeEnd runs once the whole body was sent, before the response ends (the sessions record). */
  observer?: { tap(chunk: Buffer): void; beforeEnd(): Promise<void> },
): Promise<void> {
  const declared = Number(up.headers['content-length']);
  if (Number.isFinite(declared) && declared > cap) {
    up.body.destroy();
    throw new ApiError(502, `upstream response exceeds ${cap} bytes`);
  }
  res.statusCode = up.statusCode;
  for (const [k, v] of Object.entries(up.headers)) if (v !== undefined && !HOP_BY_HOP.has(k.toLowerCase())) res.setHeader(k, v);
  if (contentType) {
    res.setHeader('Content-Type', contentType);
    // The stream's length is unknown once it may end with an error line.
    if (contentType === NDJSON) res.removeHeader('Content-Length');
  }
  res.flushHeaders();
  let size = 0;
  let lastByte = 0x0a;
  const cut = (why: string) => {
    up.body.destroy();
    if (contentType !== NDJSON || res.destroyed) return void res.destroy(new Error(why));
    const line = JSON.stringify({ error: why, request_id: String(res.getHeader('X-Request-Id') ?? '') });
    res.end(`${lastByte === 0x0a ? '' : '\n'}${line}\n`);
  };
  try {
    for await (const c of up.body) {
      size += c.length;
      if (size > cap) return cut(`stream cut: upstream response from ${name} exceeds ${cap} bytes`);
      if (c.length) lastByte = c[c.length - 1]!;
      observer?.tap(c);
      if (!res.write(c)) await new Promise((r) => res.once('drain', r));
    }
    await observer?.beforeEnd();
    res.end();
  } catch (e) {
    const reason: unknown = signal?.aborted ? signal.reason : e;
    cut(`stream cut: ${reason instanceof ApiError ? reason.message : `upstream ${name} failed: ${(reason as Error)?.message ?? String(reason)}`}`);
  }
}

const NDJSON = 'application/x-ndjson';
