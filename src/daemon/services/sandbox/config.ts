import { existsSync } from 'node:fs';
import { SANDBOX_CALL_READY_SECONDS } from '../../../api/sandbox.js';

/** How sandboxes isolate: `auto` takes bubblewrap, else Docker, else refuses (docs/decisions/sandbox.md). */
export type SandboxMode = 'auto' | 'process' | 'docker';

export interface SandboxConfig {
  /** PLATFORM_SANDBOX_PORT: the sandbox listener; 0 picks a free port, set to the real one once listening. */
  port: number;
  /** PLATFORM_SANDBOX_MODE: auto (default), process (bubblewrap) or docker. */
  mode: SandboxMode;
  /** PLATFORM_SANDBOX_POOL_TARGET: warm sandboxes kept ready (spec 2 §8: 3). */
  poolTarget: number;
  /** PLATFORM_SANDBOX_WAIT_SECONDS: how long a request waits for a sandbox before 503 (spec 2 §8: 30 s). */
  waitMs: number;
  /** PLATFORM_SANDBOX_MAX_LIVE: sandboxes alive at once (warm, starting, running), so a burst cannot exhaust the machine. */
  maxLive: number;
  /** PLATFORM_SANDBOX_PYTHON: the interpreter of process mode (Debian's /usr/bin/python3 when present). */
  python: string;
  /** PLATFORM_SANDBOX_CALL_READY_SECONDS: how long a tool sandbox has to import the module and say ready (spec 2 §8: 110 s). */
  callReadyMs: number;
  /** PLATFORM_SANDBOX_IMAGE: the image of docker mode's execute sandboxes (it needs python3). */
  image: string;
}

const num = (v: string | undefined, d: number) => (v !== undefined && v !== '' && Number.isFinite(Number(v)) ? Number(v) : d);

export function sandboxConfig(env: NodeJS.ProcessEnv): SandboxConfig {
  const mode = (env.PLATFORM_SANDBOX_MODE ?? 'auto').toLowerCase();
  const poolTarget = Math.max(0, Math.min(32, num(env.PLATFORM_SANDBOX_POOL_TARGET, 3)));
  return {
    port: num(env.PLATFORM_SANDBOX_PORT, 0),
    mode: mode === 'process' || mode === 'docker' ? mode : 'auto',
    poolTarget,
    waitMs: Math.max(0, num(env.PLATFORM_SANDBOX_WAIT_SECONDS, 30)) * 1000,
    maxLive: Math.max(1, num(env.PLATFORM_SANDBOX_MAX_LIVE, poolTarget + 8)),
    callReadyMs: Math.max(1, num(env.PLATFORM_SANDBOX_CALL_READY_SECONDS, SANDBOX_CALL_READY_SECONDS)) * 1000,
    python: env.PLATFORM_SANDBOX_PYTHON || (existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3'),
    image: env.PLATFORM_SANDBOX_IMAGE || env.PLATFORM_DOCKER_IMAGE_PYTHON || 'python:3.12-slim',
  };
}
