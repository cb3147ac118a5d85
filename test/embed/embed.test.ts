import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { cast } from '../helpers/fixtures.js';
import { waitState } from '../agents/helpers.js';
import { deployAgent } from '../knowledge/fixtures.js';

/**
 * The embeddable widget: settings routes, the anonymous config and invoke with the Origin allow
 * list and per-address rate limit, and the served script running in real headless chromium on
 * pages from an allowed and a refused origin.
 */
const run = promisify(execFile);
let d: TestDaemon;
let c: Awaited<ReturnType<typeof cast>>;
let q: string;
let allowed: { server: Server; origin: string };
let refused: { server: Server; origin: string };
let key: string;

async function pageServer(html: () => string): Promise<{ server: Server; origin: string }> {
  const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(html()));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}
const page = () => `<!doctype html><html><body><h1>shop</h1><script src="${d.url}/v1/embed/widget.js" data-key="${key}" data-autosend="from the browser"></script></body></html>`;

/** Loads a page in headless chromium and returns the DOM once scripts and fetches have settled. */
async function browse(url: string): Promise<string> {
  const { stdout } = await run(CHROMIUM, ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', `--user-data-dir=${d.home}/chromium-${Date.now()}`, '--virtual-time-budget=15000', '--dump-dom', url], { timeout: 45_000 });
  return stdout;
}

beforeAll(async () => {
  d = await startTestDaemon({ invokeAuthRequired: false });
  c = await cast(d);
  q = `?project=${c.project.slug}`;
  await deployAgent(d, c.member.token, 'shop', c.project.slug);
  allowed = await pageServer(page);
  refused = await pageServer(page);
  await waitState(d, c.member.token, 'shop', 'ready', c.project.slug, 60_000);
}, 90_000);
afterAll(async () => {
  allowed?.server.close();
  refused?.server.close();
  await d?.close();
});

describe('embed settings', () => {
  it('put, get, rotate-key and delete, owner only', async () => {
    const t = { token: c.member.token };
    expect((await d.api('GET', `/v1/agents/shop/embed${q}`, t)).status).toBe(404);
    const put = await d.api('PUT', `/v1/agents/shop/embed${q}`, { ...t, body: { allowed_origins: [allowed.origin, allowed.origin], greeting: 'Hi! Ask me anything.', theme: { title: 'Shop help', color: '#112233' }, rate_limit_per_minute: 3 } });
    expect(put.status, put.text).toBe(200);
    expect(put.body).toMatchObject({ agent: 'shop', allowed_origins: [allowed.origin], greeting: 'Hi! Ask me anything.', rate_limit_per_minute: 3 });
    expect(put.body.key).toMatch(/^emb_[A-Za-z0-9]{32}$/);
    expect(put.body.snippet).toBe(`<script src="${d.url}/v1/embed/widget.js" data-key="${put.body.key}" async></script>`);
    const rotated = await d.api('POST', `/v1/agents/shop/embed/rotate-key${q}`, { ...t, body: {} });
    expect(rotated.body.key).not.toBe(put.body.key);
    expect((await d.api('GET', `/v1/embed/${put.body.key}/config`, { headers: { origin: allowed.origin } })).status).toBe(404);
    key = rotated.body.key;
    expect((await d.api('GET', `/v1/agents/shop/embed${q}`, t)).body.key).toBe(key);

    expect((await d.api('PUT', `/v1/agents/shop/embed${q}`, { ...t, body: { allowed_origins: ['https://x.test/path'] } })).status).toBe(400);
    expect((await d.api('PUT', `/v1/agents/shop/embed${q}`, { ...t, body: { allowed_origins: [allowed.origin], api_key: 'x' } })).body.error).toMatch(/api_key/);
    for (const token of [c.outsider.token]) {
      expect((await d.api('GET', `/v1/agents/shop/embed${q}`, { token })).status).toBe(404);
      expect((await d.api('PUT', `/v1/agents/shop/embed${q}`, { token, body: { allowed_origins: [allowed.origin] } })).status).toBe(404);
      expect((await d.api('POST', `/v1/agents/shop/embed/rotate-key${q}`, { token, body: {} })).status).toBe(404);
      expect((await d.api('DELETE', `/v1/agents/shop/embed${q}`, { token })).status).toBe(404);
    }
    expect((await d.api('GET', `/v1/agents/shop/embed${q}`)).status).toBe(401);
  });

  it('anonymous config: allowed origin only, no credentials in it', async () => {
    const ok = await d.api('GET', `/v1/embed/${key}/config`, { headers: { origin: allowed.origin } });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ agent: 'shop', greeting: 'Hi! Ask me anything.', theme: { title: 'Shop help', color: '#112233' } });
    expect(ok.headers.get('access-control-allow-origin')).toBe(allowed.origin);
    expect((await d.api('GET', `/v1/embed/${key}/config`, { headers: { origin: refused.origin } })).status).toBe(403);
    expect((await d.api('GET', `/v1/embed/${key}/config`)).status).toBe(403);
    expect((await d.api('GET', `/v1/embed/emb_${'z'.repeat(32)}/config`, { headers: { origin: allowed.origin } })).status).toBe(404);
    expect((await d.api('GET', `/v1/embed/not-a-key/config`, { headers: { origin: allowed.origin } })).status).toBe(400);
    const script = await d.api('GET', '/v1/embed/widget.js');
    expect(script.headers.get('content-type')).toMatch(/text\/javascript/);
  });
});

const CHROMIUM = '/usr/bin/chromium';
if (!existsSync(CHROMIUM)) console.warn(`SKIPPED: the widget browser test needs ${CHROMIUM} (Debian package chromium; scripts/test-all.sh installs it)`);

describe.skipIf(!existsSync(CHROMIUM))('the widget in headless chromium', () => {
  it('works from an allowed origin, is refused from another, and is rate-limited per address', async () => {
    const good = await browse(allowed.origin);
    expect(good).toMatch(/id="platform-widget"[^>]*data-state="ready"/);
    expect(good).toContain('Hi! Ask me anything.');
    expect(good).toContain('Shop help');
    expect(good).toMatch(/class="platform-widget-agent">hello from the browser</);

    const bad = await browse(refused.origin);
    expect(bad).toMatch(/data-state="error"/);
    expect(bad).not.toContain('Hi! Ask me anything.');
    expect(bad).not.toContain('hello from the browser<');

    // The browser spent one of the 3 a minute; two more pass, the next is refused with Retry-After.
    const invoke = () => d.api('POST', `/v1/embed/${key}/invoke`, { raw: JSON.stringify({ message: 'again' }), headers: { origin: allowed.origin, 'content-type': 'text/plain' } });
    expect((await invoke()).status).toBe(200);
    const second = await invoke();
    expect(second.status).toBe(200);
    expect(second.body.reply).toBe('hello again');
    const limited = await invoke();
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    // Refused origins never reach the agent nor spend the allowance.
    expect((await d.api('POST', `/v1/embed/${key}/invoke`, { raw: '{"message":"x"}', headers: { origin: refused.origin } })).status).toBe(403);
  }, 120_000);

  it('deleting the widget retires its key', async () => {
    expect((await d.api('DELETE', `/v1/agents/shop/embed${q}`, { token: c.member.token })).status).toBe(200);
    expect((await d.api('GET', `/v1/embed/${key}/config`, { headers: { origin: allowed.origin } })).status).toBe(404);
    expect((await d.api('DELETE', `/v1/agents/shop/embed${q}`, { token: c.member.token })).status).toBe(404);
  });
});
