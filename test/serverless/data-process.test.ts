import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CRASH_PY, SERVER_PY, SILENT_PY, call, desired, harness, hostOf, sleep, source, template, waitFor, waitReport, type Harness } from './data-helpers.js';

/**
 * The serverless data plane driven directly, with source folders run as sandboxed processes
 * (the no-Docker path): split, tags, publish, the internal path form, autoscaling, scale to
 * zero, failures and logs.
 */
let h: Harness;
beforeAll(async () => {
  h = await harness({ idleMs: 1500, startTimeoutMs: 3000 });
});
afterAll(async () => h?.close());

describe('serverless data plane: source folders as processes', { timeout: 120_000 }, () => {
  it('splits 50/50 over 400 requests, serves a tag address, honours publish and forwards headers', async () => {
    const a = template('web', 1, source(h, { 'main.py': SERVER_PY }), { env: { MSG: 'one' } });
    const b = template('web', 2, source(h, { 'main.py': SERVER_PY }), { env: { MSG: 'two' } });
    const traffic = [
      { revision: a.revision, percent: 50, tag: 'blue' },
      { revision: b.revision, percent: 50 },
    ];
    h.plane.apply(desired('web', [a, b], traffic));
    await waitReport(h, 'svc-web', a.revision, 'ready');
    await waitReport(h, 'svc-web', b.revision, 'ready');
    const counts: Record<string, number> = {};
    for (let i = 0; i < 400; i++) {
      const r = await call(h, hostOf('web'), `/n/${i}`);
      expect(r.status).toBe(200);
      counts[r.body.revision] = (counts[r.body.revision] ?? 0) + 1;
    }
    console.log('50/50 split over 400 requests:', counts);
    expect(Math.abs(counts[a.revision]! - 200)).toBeLessThanOrEqual(20);
    expect(Math.abs(counts[b.revision]! - 200)).toBeLessThanOrEqual(20);

    const tagged = await call(h, hostOf('web', 'blue'), '/x?y=1', { headers: { 'x-forwarded-for': '10.0.0.9' } });
    expect(tagged.status).toBe(200);
    expect(tagged.body.revision).toBe(a.revision);
    expect(tagged.body.path).toBe('/x?y=1');
    expect(tagged.body.port).toBe(String(tagged.body.port));
    expect(tagged.body.headers['x-forwarded-for']).toBe('10.0.0.9, 127.0.0.1');
    expect(tagged.body.headers['x-forwarded-proto']).toBe('http');
    expect(tagged.body.headers['x-forwarded-host']).toBe(hostOf('web', 'blue'));
    // An unknown tag is no address of this service.
    expect(h.plane.matchesHost(hostOf('web', 'green'))).toBe(false);

    // POST bodies stream through.
    const posted = await call(h, hostOf('web'), '/p', { method: 'POST', body: 'payload', headers: { 'content-type': 'text/plain' } });
    expect(posted.body.body).toBe('payload');

    // The internal form strips its prefix and says so.
    const res = await fetch(`${h.internalUrl}/services/tstprj/web/inside?q=2`);
    const inside = (await res.json()) as any;
    expect(inside.path).toBe('/inside?q=2');
    expect(inside.headers['x-forwarded-prefix']).toBe('/services/tstprj/web');
    const tagInside = (await (await fetch(`${h.internalUrl}/services/tstprj/blue-web`)).json()) as any;
    expect(tagInside.revision).toBe(a.revision);
    expect(tagInside.path).toBe('/');
    // ... and only on the internal listener.
    expect((await fetch(`${h.url}/services/tstprj/web/`)).status).toBe(404);

    // Unpublished: the public and tag addresses are absent; the internal one still works.
    h.plane.apply(desired('web', [a, b], traffic, {}, false));
    expect(h.plane.matchesHost(hostOf('web'))).toBe(false);
    expect(h.plane.matchesHost(hostOf('web', 'blue'))).toBe(false);
    expect((await call(h, hostOf('web'))).status).toBe(404);
    expect((await fetch(`${h.internalUrl}/services/tstprj/web/`)).status).toBe(200);
    await h.plane.remove('svc-web');
    expect(h.plane.matchesPath('/services/tstprj/web/')).toBe(false);
  });

  it('container_concurrency 1 with parallel requests starts instances up to max_scale, then scales to zero and cold-starts', async () => {
    const t = template('busy', 1, source(h, { 'main.py': SERVER_PY }));
    h.plane.apply(desired('busy', [t], [{ revision: t.revision, percent: 100 }], { containerConcurrency: 1, maxScale: 3 }));
    await waitReport(h, 'svc-busy', t.revision, 'ready');
    const results = await Promise.all(Array.from({ length: 6 }, () => call(h, hostOf('busy'), '/?ms=600')));
    expect(results.every((r) => r.status === 200)).toBe(true);
    const instances = new Set(results.map((r) => r.body.instance));
    console.log(`6 parallel requests at container_concurrency 1, max_scale 3: ${instances.size} instances`);
    expect(instances.size).toBe(3);
    expect(h.plane.instances('svc-busy')).toMatchObject([{ revision: t.revision, replicas: 3 }]);
    // Idle past the window (1.5 s): every instance stops.
    await waitFor('scale to zero', () => h.plane.instances('svc-busy')[0]!.replicas === 0, 15_000);
    const logs = await logsText(h, 'svc-busy', 10, false);
    expect(logs).toMatch(/scaled to zero/);
    const t0 = performance.now();
    const cold = await call(h, hostOf('busy'));
    const coldMs = performance.now() - t0;
    console.log(`cold start from zero (process, python): ${coldMs.toFixed(0)} ms`);
    expect(cold.status).toBe(200);
    expect(h.plane.instances('svc-busy')[0]!.replicas).toBe(1);
    await h.plane.remove('svc-busy');
  });

  it('min_scale keeps instances warm past the idle window', async () => {
    const t = template('warm', 1, source(h, { 'main.py': SERVER_PY }));
    h.plane.apply(desired('warm', [t], [{ revision: t.revision, percent: 100 }], { minScale: 2 }));
    await waitFor('two warm instances', () => h.plane.instances('svc-warm')[0]?.replicas === 2, 20_000);
    await sleep(3000);
    expect(h.plane.instances('svc-warm')[0]!.replicas).toBe(2);
    // min_scale 0 again: they go.
    h.plane.apply(desired('warm', [t], [{ revision: t.revision, percent: 100 }], { minScale: 0 }));
    await waitFor('scale to zero', () => h.plane.instances('svc-warm')[0]!.replicas === 0, 15_000);
    await h.plane.remove('svc-warm');
  });

  it('a crashing server and one that never listens are not ready with the reason; requests get 503', async () => {
    const crash = template('bad', 1, source(h, { 'main.py': CRASH_PY }));
    const silent = template('bad', 2, source(h, { 'main.py': SILENT_PY }));
    h.plane.apply(desired('bad', [crash, silent], [{ revision: crash.revision, percent: 100 }, { revision: silent.revision, percent: 0, tag: 'slow' }]));
    const r1 = await waitReport(h, 'svc-bad', crash.revision, 'not_ready');
    expect(r1.reason).toBe('ExitCode2');
    expect(r1.message).toMatch(/exited \(exit code 2\) before it listened on port \d+ \(\$PORT\)/);
    expect(r1.message).toContain('boom: DATABASE_URL is not set');
    const r2 = await waitReport(h, 'svc-bad', silent.revision, 'not_ready');
    expect(r2.reason).toBe('ProgressDeadlineExceeded');
    expect(r2.message).toContain('did not listen on port');
    expect(r2.message).toContain('warming up forever');
    // Reports are verdicts: not_ready with the reason, no unknown before it.
    expect(h.reports.filter((x) => x.revision === crash.revision).map((x) => x.r.state)).toEqual(['not_ready']);
    const res = await call(h, hostOf('bad'));
    expect(res.status).toBe(503);
    expect(res.body.error).toContain('boom');
    expect(res.body.request_id).toBeTruthy();
    await h.plane.remove('svc-bad');
  });

  it('a slow answer is a 504 and an instance dying mid-request a 502, in the envelope', async () => {
    const t = template('edge', 1, source(h, { 'main.py': SERVER_PY }), { timeoutSeconds: 2 });
    h.plane.apply(desired('edge', [t], [{ revision: t.revision, percent: 100 }]));
    await waitReport(h, 'svc-edge', t.revision, 'ready');
    const slow = await call(h, hostOf('edge'), '/?ms=4000');
    expect(slow.status).toBe(504);
    expect(slow.body.error).toBe('service edge (revision edge-00001) did not answer within 2 s (timeout_seconds)');
    expect(slow.body.request_id).toBeTruthy();
    const dead = await call(h, hostOf('edge'), '/crash');
    expect(dead.status).toBe(502);
    expect(dead.body.error).toMatch(/^service edge \(revision edge-00001\) failed to answer: /);
    // The crashed instance is replaced on the next request.
    const again = await call(h, hostOf('edge'));
    expect(again.status, again.text).toBe(200);
    await h.plane.remove('svc-edge');
  });

  it('a revision that leaves the split drains: its request in flight finishes, then its instance stops', async () => {
    const files = source(h, { 'main.py': SERVER_PY });
    const one = template('drain', 1, files);
    const two = template('drain', 2, files, { env: { V: '2' } });
    h.plane.apply(desired('drain', [one], [{ revision: one.revision, percent: 100 }]));
    await waitReport(h, 'svc-drain', one.revision, 'ready');
    const inFlight = call(h, hostOf('drain'), '/?ms=1500');
    await waitFor('the request to reach revision 1', () => h.plane.instances('svc-drain').some((i) => i.revision === one.revision && i.inflight === 1));
    h.plane.apply(desired('drain', [two], [{ revision: two.revision, percent: 100 }]));
    const answered = await inFlight;
    expect(answered.status, answered.text).toBe(200);
    expect(answered.body.revision).toBe(one.revision);
    // Draining, it still counts until its request is answered; then it stops.
    await waitFor('revision 1 to stop', () => !h.plane.instances('svc-drain').some((i) => i.revision === one.revision));
    const next = await call(h, hostOf('drain'));
    expect(next.body.revision).toBe(two.revision);
    await h.plane.remove('svc-drain');
  });

  it('logs: tail, follow until the instance stops, and the scaled-to-zero sentence', async () => {
    const t = template('talk', 1, source(h, { 'main.py': SERVER_PY }));
    h.plane.apply(desired('talk', [t], [{ revision: t.revision, percent: 100 }], { minScale: 1 }));
    await waitFor('one instance', () => h.plane.instances('svc-talk')[0]?.replicas === 1, 20_000);
    for (let i = 0; i < 5; i++) await call(h, hostOf('talk'), `/line${i}`);
    const tail2 = await logsText(h, 'svc-talk', 2, false);
    expect(tail2.trim().split('\n')).toHaveLength(2);
    expect(tail2).toContain('served /line4');
    expect(tail2).not.toContain('served /line2');
    const all = await logsText(h, 'svc-talk', 500, false);
    expect(all).toContain('listening on');
    expect(all).toMatch(/instance talk-00001-\w+ ready/);

    // Follow: new lines arrive, then the instance stops and the stream says why it ended.
    const follow = logsText(h, 'svc-talk', 1, true);
    await sleep(200);
    await call(h, hostOf('talk'), '/followed');
    await sleep(200);
    await h.plane.remove('svc-talk');
    const followed = await follow;
    expect(followed).toContain('served /followed');
    expect(followed.trim().split('\n').pop()).toMatch(/^\[log stream ended: instance talk-00001-\w+ stopped\]$/);
    expect(await logsText(h, 'svc-talk', 10, false)).toMatch(/is scaled to zero/);
  });
});

/** The logs method into a real ServerResponse, read as text. */
export async function logsText(h: Harness, serviceId: string, tail: number, follow: boolean): Promise<string> {
  const { createServer } = await import('node:http');
  const server = createServer((_req, res) => void h.plane.logs(serviceId, { tail, follow }, res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  try {
    const res = await fetch(`http://127.0.0.1:${(server.address() as any).port}/`);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    return await res.text();
  } finally {
    server.closeAllConnections();
    server.close();
  }
}
