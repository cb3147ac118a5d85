import { z } from 'zod';
import { MiB, route } from './contract.js';
import { lazySchema } from './lazy.js';

/**
 * The code sandbox (spec 2 §2.6, §4.6, §7, §8). Served on the daemon's sandbox listener only
 * (SANDBOX_URL, loopback, no authentication), never on the public address: the OpenAPI document
 * marks these routes `x-listener: sandbox`.
 */

/** Spec 2 §8: execute timeout default 20 s, at most 60 s; 0 or absent means the default. */
export const SANDBOX_EXECUTE_TIMEOUT_DEFAULT = 20;
export const SANDBOX_EXECUTE_TIMEOUT_MAX = 60;
/** Spec 2 §8: tool call timeout default 30 s, at most 120 s; the sandbox has 110 s to get ready. */
export const SANDBOX_CALL_TIMEOUT_DEFAULT = 30;
export const SANDBOX_CALL_TIMEOUT_MAX = 120;
export const SANDBOX_CALL_READY_SECONDS = 110;
/** Spec 2 §4.6: a tool call body is at most 1 MiB; its runner's reply at most 8 MiB. */
export const SANDBOX_CALL_BODY_LIMIT = 1 * MiB;
export const SANDBOX_CALL_REPLY_LIMIT = 8 * MiB;
/** Execute bodies carry input files: 8 MiB (docs/decisions/sandbox.md). */
export const SANDBOX_EXECUTE_BODY_LIMIT = 8 * MiB;
/** Each of stdout and stderr keeps at most this much; a run that writes more is stopped (docs/decisions/sandbox.md). */
export const SANDBOX_OUTPUT_LIMIT = 1 * MiB;
/** The agent tool run_python always uses this deadline (spec 2 §4.6). */
export const RUN_PYTHON_TIMEOUT = 20;

export const SandboxFile = lazySchema(() => z.strictObject({
  path: z.string().min(1).describe('relative to the working directory; a path escaping it gives 502'),
  content_b64: z.string().describe('file content, base64'),
}));
export type SandboxFile = z.infer<typeof SandboxFile>;

/** `language` and `timeout_s` are checked by the handler, with the spec's 400 wording. */
export const ExecuteBody = lazySchema(() => z.strictObject({
  code: z.string(),
  language: z.string().optional().describe('python (the default and the only one)'),
  timeout_s: z.number().int().optional().describe('1 to 60; 0 or absent means 20'),
  files: z.array(SandboxFile).max(1000).optional().describe('written into the working directory before the code runs'),
}));
export type ExecuteBody = z.infer<typeof ExecuteBody>;

export const ExecuteResult = lazySchema(() => z.object({
  sandbox_id: z.string(),
  stdout: z.string(),
  stderr: z.string(),
  exit_code: z.number().int().describe('-1 when the sandbox killed the run (deadline, output limit)'),
  duration_ms: z.number().int(),
}));
export type ExecuteResult = z.infer<typeof ExecuteResult>;

export const CallBody = lazySchema(() => z.strictObject({
  image: z.string().min(1).describe("a deployed agent revision's image (the agent's `image` field, its AGENT_IMAGE)"),
  function: z.string().min(1),
  module: z.string().optional().describe('default agent'),
  args: z.record(z.string(), z.unknown()).optional().describe('keyword arguments'),
  timeout_s: z.number().int().optional().describe('1 to 120; 0 or absent means 30'),
}));
export type CallBody = z.infer<typeof CallBody>;

export const CallResult = lazySchema(() => z.object({
  sandbox_id: z.string(),
  result: z.unknown().optional().describe('the JSON value the function returned (omitted for None and when it raised)'),
  duration_ms: z.number().int(),
  error: z.string().optional().describe('present only when the function raised'),
}));
export type CallResult = z.infer<typeof CallResult>;

export const PoolStats = lazySchema(() => z.object({
  warm: z.number().int().describe('sandboxes ready with an interpreter waiting for code'),
  target: z.number().int(),
  in_flight: z.number().int(),
  created_total: z.number().int(),
}));
export type PoolStats = z.infer<typeof PoolStats>;

export const sandboxRoutes = {
  execute: route({
    id: 'sandboxExecute',
    method: 'POST',
    path: '/v1/execute',
    summary: 'Run a Python snippet in a throwaway sandbox from the warm pool (sandbox listener)',
    auth: 'none',
    unlimited: true,
    listener: 'sandbox',
    body: ExecuteBody,
    bodyLimit: SANDBOX_EXECUTE_BODY_LIMIT,
    status: 200,
    response: ExecuteResult,
  }),
  call: route({
    id: 'sandboxCall',
    method: 'POST',
    path: '/v1/call',
    summary: "Run one function of an agent's code in a one-use sandbox (sandbox listener)",
    auth: 'none',
    unlimited: true,
    listener: 'sandbox',
    body: CallBody,
    bodyLimit: SANDBOX_CALL_BODY_LIMIT,
    status: 200,
    response: CallResult,
  }),
  pool: route({
    id: 'sandboxPool',
    method: 'GET',
    path: '/v1/pool',
    summary: 'Warm pool statistics (sandbox listener)',
    auth: 'none',
    unlimited: true,
    listener: 'sandbox',
    status: 200,
    response: PoolStats,
  }),
};
