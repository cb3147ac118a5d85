import dns2 from 'dns2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatewayConfig } from '../../src/daemon/config.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { grant, makeProject, makeUser } from '../helpers/fixtures.js';
import { gw, viaHost } from './helpers.js';

// Custom domains: claim, verification by the sweep through a loopback DNS server (dns2), serving
// by the custom Host once verified, and the refusal to release while published.
const { Packet } = dns2;
const records = new Map<string, string>();
let dnsServer: ReturnType<typeof dns2.createServer>;
let queries = 0;
let d: TestDaemon;
let token: string;
let otherToken: string;
let p: { id: string; short: string };
let other: { id: string; short: string };

beforeAll(async () => {
  dnsServer = dns2.createServer({
    udp: true,
    handle: (request: any, send: (r: any) => void) => {
      queries++;
      const response = Packet.createResponseFromRequest(request);
      const [q] = request.questions;
      const target = records.get(String(q.name).toLowerCase());
      if (target && q.type === Packet.TYPE.CNAME) response.answers.push({ name: q.name, type: Packet.TYPE.CNAME, class: Packet.CLASS.IN, ttl: 30, domain: target } as any);
      send(response);
    },
  });
  const addresses = await dnsServer.listen({ udp: { port: 0, address: '127.0.0.1' } } as any);
  const port = (addresses as any).udp.port;
  d = await startTestDaemon({ gateway: { ...gatewayConfig({}), dnsServers: [`127.0.0.1:${port}`], verifyIntervalMs: 100 } });
  p = makeProject(d);
  other = makeProject(d);
  const admin = await makeUser(d);
  const otherAdmin = await makeUser(d);
  grant(d, p.id, admin.id, 'admin');
  grant(d, other.id, otherAdmin.id, 'admin');
  token = admin.token;
  otherToken = otherAdmin.token;
});
afterAll(async () => {
  await d?.close();
  dnsServer?.close();
});

async function domainOf(hostname: string) {
  return (await d.api('GET', `${gw(p.id)}/domains`, { token })).body.domains.find((x: any) => x.hostname === hostname);
}

/** Waits for the sweep to have asked the DNS server at least `n` more times. */
async function sweeps(n = 2) {
  const start = queries;
  const deadline = Date.now() + 10_000;
  while (queries < start + n) {
    if (Date.now() > deadline) throw new Error('the domain sweep did not query the DNS server');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('custom domains', () => {
  it('stays unverified without a record or with a wrong one; verifies once the CNAME names <short>.<zone>', async () => {
    const c = await d.api('POST', `${gw(p.id)}/domains`, { token, body: { hostname: 'shop.example.test', note: 'storefront' } });
    expect(c.status).toBe(201);
    expect(c.body.record).toEqual({ type: 'CNAME', name: 'shop.example.test', value: `${p.short}.gw.localhost` });
    await sweeps();
    expect((await domainOf('shop.example.test')).verified).toBe(false);
    records.set('shop.example.test', `${other.short}.gw.localhost`);
    await sweeps();
    expect((await domainOf('shop.example.test')).verified).toBe(false);

    // An endpoint on it, published before verification: pending, and not served yet.
    const e = await d.api('POST', `${gw(p.id)}/endpoints`, { token, body: { name: 'store', target: { kind: 'vectordb' }, domain: { kind: 'custom', hostname: 'shop.example.test' } } });
    expect(e.status, e.text).toBe(201);
    const pub = await d.api('POST', `${gw(p.id)}/endpoints/store/publish`, { token });
    expect(pub.body).toMatchObject({ state: 'pending_verification', url: `http://shop.example.test:${d.port}` });
    expect((await viaHost(d, `shop.example.test:${d.port}`)).status).toBe(404);

    records.set('shop.example.test', `${p.short}.gw.localhost.`);
    const deadline = Date.now() + 10_000;
    while (!(await domainOf('shop.example.test')).verified) {
      if (Date.now() > deadline) throw new Error('never verified');
      await new Promise((r) => setTimeout(r, 50));
    }
    expect((await d.api('GET', `${gw(p.id)}/endpoints/store`, { token })).body).toMatchObject({ state: 'ready', domain: { hostname: 'shop.example.test', verified: true } });
  });

  it('serves the endpoint by its custom Host (any case, trailing dot, port); its shared address no longer answers', async () => {
    for (const h of ['shop.example.test', `SHOP.Example.Test.:${d.port}`, 'shop.example.test.']) {
      const r = await viaHost(d, h);
      expect(r.status, h).toBe(200);
      expect(r.headers['x-gateway-decision']).toMatch(/endpoint=store/);
    }
    expect((await viaHost(d, `store-${p.short}.gw.localhost`)).status).toBe(404);
    expect((await viaHost(d, 'www.shop.example.test')).status).not.toBe(200);
  });

  it('another project can neither claim the hostname (409) nor put an endpoint on it (400)', async () => {
    expect((await d.api('POST', `${gw(other.id)}/domains`, { token: otherToken, body: { hostname: 'Shop.Example.Test' } })).status).toBe(409);
    const r = await d.api('POST', `${gw(other.id)}/endpoints`, { token: otherToken, body: { name: 'hijack', target: { kind: 'vectordb' }, domain: { kind: 'custom', hostname: 'shop.example.test' } } });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(/unclaimed custom hostname/);
    expect((await d.api('DELETE', `${gw(other.id)}/domains/shop.example.test`, { token: otherToken })).status).toBe(404);
  });

  it('refuses to release the domain while the endpoint is published on it, then releases it', async () => {
    const refused = await d.api('DELETE', `${gw(p.id)}/domains/shop.example.test`, { token });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatch(/unpublish it or move it/);
    expect((await d.api('POST', `${gw(p.id)}/endpoints/store/unpublish`, { token })).status).toBe(200);
    expect((await d.api('DELETE', `${gw(p.id)}/domains/shop.example.test`, { token })).status).toBe(204);
    expect((await viaHost(d, 'shop.example.test')).status).toBe(404);
  });
});
