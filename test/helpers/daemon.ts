import { sandboxConfig } from '../../src/daemon/services/sandbox/config.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configFromEnv, type DaemonConfig } from '../../src/daemon/config.js';
import { startDaemon, type RunningDaemon } from '../../src/daemon/server.js';
import type { Clock } from '../../src/daemon/clock.js';
import type { PlaneFactory } from '../../src/daemon/services/serverless/routes.js';

export const ADMIN_EMAIL = 'admin@example.test';
export const ADMIN_PASSWORD = 'Admin-Password-123';

export interface ApiResponse<T = any> {
  status: number;
  body: T;
  headers: Headers;
  text: string;
}

export interface TestDaemon extends RunningDaemon {
  home: string;
  /** Calls the API; `token` is sent as a bearer credential, objects as JSON bodies. */
  api<T = any>(method: string, path: string, opts?: { token?: string; body?: unknown; raw?: string; headers?: Record<string, string> }): Promise<ApiResponse<T>>;
  login(email?: string, password?: string): Promise<string>;
  adminToken(): Promise<string>;
}

/**
 * Starts a daemon in this process on an ephemeral port with a temporary state directory.
 * Sign-in throttles and rate limits are raised unless a test sets them, so suites that sign
 * in many users do not trip them by accident; the throttle tests set the spec's values.
 */
export async function startTestDaemon(
  overrides: Partial<DaemonConfig> = {},
  opts: { clock?: Clock; home?: string; serverlessPlane?: PlaneFactory } = {},
): Promise<TestDaemon> {
  const home = opts.home ?? mkdtempSync(join(tmpdir(), 'platform-test-'));
  const config = configFromEnv(
    {},
    {
      home,
      port: 0,
      admin: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD },
      signIn: { perIp: 10_000, perAccount: 10_000, windowMs: 15 * 60_000 },
      rateLimit: { burst: 0, refillPerSecond: 0 },
      // No warm code sandboxes unless a test asks (test/sandbox): a hundred test daemons each
      // starting three would only load the machine; a request still gets one on demand.
      sandbox: { ...sandboxConfig({}), poolTarget: 0 },
      ...overrides,
    },
  );
  const d = await startDaemon(config, { clock: opts.clock, serverlessPlane: opts.serverlessPlane });
  let adminToken: string | undefined;
  const api: TestDaemon['api'] = async (method, path, o = {}) => {
    const headers: Record<string, string> = { ...o.headers };
    if (o.token) headers.authorization = `Bearer ${o.token}`;
    let body: string | undefined = o.raw;
    if (o.body !== undefined) {
      body = JSON.stringify(o.body);
      headers['content-type'] = 'application/json';
    }
    const res = await fetch(d.url + path, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // plain text responses stay text
    }
    return { status: res.status, body: parsed as any, headers: res.headers, text };
  };
  const login = async (email = ADMIN_EMAIL, password = ADMIN_PASSWORD) => {
    const r = await api('POST', '/v1/auth/login', { body: { email, password } });
    if (r.status !== 200) throw new Error(`login ${email} failed: ${r.status} ${r.text}`);
    return r.body.token as string;
  };
  return {
    ...d,
    home,
    api,
    login,
    adminToken: async () => (adminToken ??= await login()),
    async close() {
      await d.close();
      if (!opts.home) rmSync(home, { recursive: true, force: true });
    },
  };
}
