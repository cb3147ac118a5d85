import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { archive } from '../agents/helpers.js';
import { loginToken, spawnDaemonProcess, type DaemonProcess } from '../helpers/daemon-process.js';
import type { ApiResponse } from '../helpers/daemon.js';
import { RECORDER_PY, until } from './helpers.js';

/**
 * One real daemon process on one state directory, restartable (kill -9 or SIGTERM) with other
 * settings, e.g. the test-only PLATFORM_TRIGGERS_TEST_CLOCK: the restart and crash tests' daemon.
 */
export class ProcessDaemon {
  readonly home = mkdtempSync(join(tmpdir(), 'platform-trg-'));
  proc?: DaemonProcess;
  token = '';
  projectId = '';

  /** `portMin`: each test file its own range of workload ports (files may run side by side). */
  constructor(private readonly portMin: number) {}

  async start(env: Record<string, string> = {}): Promise<void> {
    this.proc = await spawnDaemonProcess(this.home, { PLATFORM_WORKLOAD_PORT_MIN: String(this.portMin), PLATFORM_WORKLOAD_PORT_MAX: String(this.portMin + 99), ...env });
    this.token = await loginToken(this.proc.url);
    if (!this.projectId) this.projectId = (await this.api('GET', '/v1/projects/default')).body.id;
  }

  async kill9(): Promise<void> {
    if (!this.proc) return;
    process.kill(this.proc.pid, 'SIGKILL');
    await this.proc.exited;
    this.proc = undefined;
  }

  async stop(): Promise<void> {
    if (!this.proc) return;
    this.proc.child.kill('SIGTERM');
    await this.proc.exited;
    this.proc = undefined;
  }

  async close(): Promise<void> {
    await this.kill9().catch(() => undefined);
    rmSync(this.home, { recursive: true, force: true });
  }

  api = async (method: string, path: string, o: { token?: string; body?: unknown; raw?: string } = {}): Promise<ApiResponse> => {
    const headers: Record<string, string> = { authorization: `Bearer ${o.token ?? this.token}` };
    let body: string | undefined = o.raw;
    if (o.body !== undefined) {
      body = JSON.stringify(o.body);
      headers['content-type'] = 'application/json';
    }
    const res = await fetch(this.proc!.url + path, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // text
    }
    return { status: res.status, body: parsed as any, headers: res.headers, text };
  };

  async deployRecorder(name = 'recorder'): Promise<void> {
    const form = new FormData();
    form.append('name', name);
    form.append('framework', 'function');
    form.append('runtime', 'python');
    form.append('code', new Blob([new Uint8Array(archive({ 'main.py': RECORDER_PY }))]), 'code.tar.gz');
    const r = await fetch(`${this.proc!.url}/v1/agents?project=default`, { method: 'POST', body: form, headers: { authorization: `Bearer ${this.token}` } });
    expect(r.status, await r.clone().text()).toBe(202);
    const view = await until(async () => (await this.api('GET', `/v1/agents/${name}?project=default`)).body, (v: any) => v.state === 'ready' || v.state === 'failed', 90_000, 100);
    expect(view.state, JSON.stringify(view)).toBe('ready');
  }
}
