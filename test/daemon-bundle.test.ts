import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAEMON_BUNDLE, DAEMON_MAIN, loginToken, spawnDaemonProcess, type DaemonProcess } from './helpers/daemon-process.js';

/**
 * The bundle `platform daemon start` runs loads zod on the first validated request and builds each
 * route's schemas on first use (docs/decisions/speed-daemon.md, "Start"): it must answer exactly
 * as the module tree does, whose zod is imported at start. Both run here side by side.
 */
const homes: string[] = [];
const daemons: DaemonProcess[] = [];
let bundled: DaemonProcess;
let modules: DaemonProcess;

async function spawn(main: string): Promise<DaemonProcess> {
  const home = mkdtempSync(join(tmpdir(), 'platform-bundle-'));
  homes.push(home);
  const d = await spawnDaemonProcess(home, {}, 20_000, main);
  daemons.push(d);
  return d;
}

async function call(d: DaemonProcess, method: string, path: string, body?: unknown, token?: string) {
  const r = await fetch(d.url + path, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  return { status: r.status, body: text ? JSON.parse(text) : undefined };
}

beforeAll(async () => {
  [bundled, modules] = await Promise.all([spawn(DAEMON_BUNDLE), spawn(DAEMON_MAIN)]);
});

afterAll(async () => {
  for (const d of daemons) {
    d.child.kill('SIGTERM');
    await d.exited;
  }
  for (const h of homes) rmSync(h, { recursive: true, force: true });
});

describe('the bundled daemon validates with the contract as the module tree does', () => {
  it('refuses an unknown field of the very first request with a 400 naming it, in the envelope', async () => {
    for (const d of [bundled, modules]) {
      const r = await call(d, 'POST', '/v1/auth/login', { email: 'admin@example.test', password: 'x', remember: true });
      expect(r.status).toBe(400);
      expect(r.body.error).toBe('unknown body field: remember');
      expect(typeof r.body.request_id).toBe('string');
    }
  });

  it('answers valid requests, and bad ones with the same errors', async () => {
    const answers = [];
    for (const d of [bundled, modules]) {
      const token = await loginToken(d.url);
      const created = await call(d, 'POST', '/v1/projects', { slug: 'bundle-check', name: 'Bundle check' }, token);
      expect(created.status).toBe(201);
      const listed = await call(d, 'GET', '/v1/projects?page_size=200', undefined, token);
      expect(listed.status).toBe(200);
      expect(listed.body.projects.map((p: { slug: string }) => p.slug)).toContain('bundle-check');
      const badSlug = await call(d, 'POST', '/v1/projects', { slug: 7 }, token);
      const badCache = await call(d, 'POST', `/v1/projects/${created.body.project.id}/memorystores`, { name: 'c', size_class: 'huge' }, token);
      answers.push([badSlug.status, badSlug.body.error, badCache.status, badCache.body.error]);
    }
    expect(answers[0]![0]).toBe(400);
    expect(answers[0]![2]).toBe(400);
    expect(answers[0]).toEqual(answers[1]);
  });

  it('serves the same OpenAPI document, every schema in it', async () => {
    const docs = [];
    for (const d of [bundled, modules]) {
      const r = await call(d, 'GET', '/v1/openapi.json', undefined, await loginToken(d.url));
      expect(r.status).toBe(200);
      docs.push(r.body);
    }
    expect(Object.keys(docs[0].paths).length).toBeGreaterThan(100);
    expect(docs[0]).toEqual(docs[1]);
  });
});
