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
async function browse(url: string, profile = `chromium-${Date.now()}`): Promise<string> {
  const { stdout } = await run(CHROMIUM, ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', `--user-data-dir=${d.home}/${profile}`, '--virtual-time-budget=15000', '--dump-dom', url], { timeout: 45_000 });
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

    // The browser spent two of the 3 a minute (reading its session's history, then the invoke); one
    // more passes, the next is refused with Retry-After.
    const invoke = () => d.api('POST', `/v1/embed/${key}/invoke`, { raw: JSON.stringify({ message: 'again', end_user: 'e'.repeat(24) }), headers: { origin: allowed.origin, 'content-type': 'text/plain' } });
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

describe("widget sessions belong to the widget's end user", () => {
  const A = `a${'1'.repeat(31)}`;
  const B = `b${'2'.repeat(31)}`;
  const post = (path: string, body: Record<string, unknown>, origin = allowed.origin) =>
    d.api('POST', `/v1/embed/${key}${path}`, { raw: JSON.stringify(body), headers: { origin, 'content-type': 'text/plain' } });

  it('put again (a fresh key and window)', async () => {
    const put = await d.api('PUT', `/v1/agents/shop/embed${q}`, { token: c.member.token, body: { allowed_origins: [allowed.origin], greeting: 'Welcome back.', rate_limit_per_minute: 600 } });
    expect(put.status, put.text).toBe(200);
    key = put.body.key;
  });

  it('invoke names the end user by end_user; the page cannot pick a user_id', async () => {
    const first = await post('/invoke', { message: 'one', end_user: A });
    expect(first.status, first.text).toBe(200);
    const s = first.body.session_id as string;
    expect(first.body.user_id).toMatch(/^widget-[A-Za-z0-9_-]{22}$/);
    expect(first.body.user_id).not.toContain(A);
    expect((await post('/invoke', { message: 'two', end_user: A, session_id: s })).status).toBe(200);
    // Another end user who learns the session id cannot continue it (409, as on the invoke route).
    const intruder = await post('/invoke', { message: 'mine now', end_user: B, session_id: s });
    expect(intruder.status).toBe(409);
    expect(intruder.body.error).toMatch(/belongs to another user/);
    const chosen = await post('/invoke', { message: 'x', end_user: A, user_id: 'someone' });
    expect(chosen.status).toBe(400);
    expect(chosen.body.error).toMatch(/^user_id/);
    expect((await post('/invoke', { message: 'x' })).body.error).toMatch(/^end_user is required/);
    expect((await post('/invoke', { message: 'x', end_user: 'short' })).status).toBe(400);
    // Nor can an anonymous caller of the plain invoke route pose as a widget end user.
    const posing = await d.api('POST', `/v1/agents/shop/invoke${q}`, { body: { message: 'x', user_id: first.body.user_id, session_id: s } });
    expect(posing.status).toBe(400);
    expect(posing.body.error).toMatch(/^user_id: ids starting with widget-/);
    // The owner sees the derived id, never the end user's secret.
    const owner = await d.api('GET', `/v1/agents/shop/sessions/${s}${q}`, { token: c.member.token });
    expect(owner.body.session.user_id).toBe(first.body.user_id);
    expect(owner.text).not.toContain(A);
  });

  it("lists and reads only the end user's own sessions; another's is 404 like a missing one", async () => {
    const mine = await post('/sessions:list', { end_user: A });
    expect(mine.status, mine.text).toBe(200);
    expect(mine.body.sessions).toHaveLength(1);
    expect(mine.body.sessions[0]).toMatchObject({ turn_count: 2 });
    expect(Object.keys(mine.body.sessions[0]).sort()).toEqual(['created_at', 'id', 'turn_count', 'updated_at']);
    const s = mine.body.sessions[0].id as string;
    expect((await post('/sessions:list', { end_user: B })).body).toEqual({ sessions: [], next_page_token: '' });

    const got = await post(`/sessions/${s}:get`, { end_user: A });
    expect(got.status).toBe(200);
    expect(got.body.turns.map((t: any) => [t.index, t.message, JSON.parse(t.output).reply])).toEqual([
      [1, 'one', 'hello one'],
      [2, 'two', 'hello two'],
    ]);
    const theirs = await post(`/sessions/${s}:get`, { end_user: B });
    const missing = await post(`/sessions/${'n'.repeat(32)}:get`, { end_user: B });
    expect(theirs.status).toBe(404);
    expect(missing.status).toBe(404);
    expect(theirs.body.error).toBe(`unknown session ${s}`);
    expect(missing.body.error).toBe(`unknown session ${'n'.repeat(32)}`);

    expect((await post('/sessions:list', { end_user: A }, refused.origin)).status).toBe(403);
    expect((await post('/sessions:list', {})).status).toBe(400);
    expect((await post('/sessions:list', { end_user: A, user_id: 'x' })).body.error).toMatch(/user_id/);
    const paged = await post('/sessions:list', { end_user: A, page_size: 1 });
    expect(paged.body.next_page_token).toBe('');
  });

  it.skipIf(!existsSync(CHROMIUM))('a returning visitor sees their conversation so far', async () => {
    const first = await browse(allowed.origin, 'returning');
    expect(first).toMatch(/class="platform-widget-agent">hello from the browser</);
    const again = await browse(allowed.origin, 'returning');
    // The earlier turn is shown from the daemon, then the new one is answered.
    expect(again.match(/class="platform-widget-agent">hello from the browser</g)).toHaveLength(2);
    expect(again.indexOf('Welcome back.')).toBeLessThan(again.indexOf('platform-widget-user'));
  }, 120_000);
});
