import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../helpers/until.js';
import type { LogLine } from '../../src/api/agents.js';
import { ApiClient } from '../../src/client/api-client.js';
import { serviceLogSource } from '../../src/tui/logs/sources.js';
import { cliSandbox } from '../helpers/cli.js';
import { SERVER_PY } from '../serverless/data-helpers.js';

/**
 * serviceLogSource against a daemon the CLI starts, with a source-folder service running as a
 * process: the service route ends a follow when its instance stops (a new revision takes the
 * traffic), so the source must open the next one by itself.
 */
const cli = cliSandbox({ PLATFORM_SCALE_TO_ZERO_SECONDS: '120' });
const work = mkdtempSync(join(tmpdir(), 'platform-svc-source-'));
let client: ApiClient;
let publicUrl: string;

/** A request to the service's public address, sent to the daemon's port with that Host. */
async function viaHost(path: string): Promise<number> {
  const u = new URL(publicUrl);
  const res = await request(`http://127.0.0.1:${u.port}${path}`, { headers: { host: u.host } });
  await res.body.text();
  return res.statusCode;
}

beforeAll(async () => {
  const dir = join(work, 'web');
  mkdirSync(dir);
  writeFileSync(join(dir, 'main.py'), SERVER_PY);
  const deployed = await cli.run(['services', 'deploy', dir, '--name', 'web', '--publish', '--wait', '--json']);
  expect(deployed.exitCode, deployed.stderr).toBe(0);
  publicUrl = deployed.json.service.url;
  const { url } = (await cli.run(['daemon', 'status', '--json'])).json as { url: string };
  const login = await fetch(`${url}/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: cli.env.PLATFORM_ADMIN_EMAIL, password: cli.env.PLATFORM_ADMIN_PASSWORD }) });
  client = new ApiClient(url, ((await login.json()) as { token: string }).token);
}, 120_000);
afterAll(async () => {
  await cli.stop();
  rmSync(work, { recursive: true, force: true });
});

describe('serviceLogSource against a real daemon', { timeout: 90_000 }, () => {
  it('delivers the instance tail, live lines once each, and the next revision after its instance replaces the old one', async () => {
    const lines: LogLine[] = [];
    const errors: string[] = [];
    const stop = serviceLogSource(client, { name: 'web', project: 'default', retryMs: 50 }).subscribe((l) => lines.push(l), (m) => errors.push(m));
    try {
      await until(() => lines.some((l) => l.message === 'listening on 8080' && l.revision === 'web-00001'), 'the tail of web-00001', 30_000);
      expect(await viaHost('/first')).toBe(200);
      await until(() => lines.some((l) => l.message === 'served /first'), 'the live line', 30_000);

      const updated = await cli.run(['services', 'update', 'web', '--env', 'MSG=two', '--wait']);
      expect(updated.exitCode, updated.stderr).toBe(0);
      await until(() => lines.some((l) => l.revision === 'web-00002' && l.message === 'listening on 8080'), 'the new revision', 30_000);
      expect(await viaHost('/second')).toBe(200);
      const second = await until(() => lines.find((l) => l.message === 'served /second'), 'a line of web-00002', 30_000);
      expect(second.revision).toBe('web-00002');

      expect(lines.filter((l) => l.message === 'served /first')).toHaveLength(1);
      expect(lines.filter((l) => l.message === 'listening on 8080' && l.revision === 'web-00001')).toHaveLength(1);
      // The old instance's end is in the lines, and nothing of web-00001 comes after web-00002 started.
      expect(lines.some((l) => l.revision === 'web-00001' && /stopping: the revision no longer takes traffic/.test(l.message))).toBe(true);
      const firstNew = lines.findIndex((l) => l.revision === 'web-00002');
      expect(lines.slice(firstNew).filter((l) => l.revision === 'web-00001')).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      stop();
    }
  });
});
