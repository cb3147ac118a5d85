import { request } from '../lazy/modules.js';

/**
 * Waits until an instance answers GET /healthz with 200, polling quickly so a cold start costs
 * little more than the shim's own start-up. Fails early when the instance exits first. The probe
 * carries the instance's secret like every other request the daemon makes to it.
 */
export async function waitHealthy(port: number, headers: Record<string, string>, timeoutMs: number, exited: Promise<unknown>): Promise<void> {
  let gone = false;
  void exited.then(() => (gone = true));
  const started = Date.now();
  const deadline = started + timeoutMs;
  while (Date.now() < deadline) {
    if (gone) throw new Error('the instance exited while starting, before it was ready');
    try {
      const res = await request(`http://127.0.0.1:${port}/healthz`, { headers, headersTimeout: 1000, bodyTimeout: 1000 });
      await res.body.dump();
      if (res.statusCode === 200) return;
    } catch {
      // not listening yet
    }
    // A refused connect costs microseconds: poll tightly through a normal start-up, then back off.
    await new Promise((r) => setTimeout(r, Date.now() - started < 2000 ? 5 : 50));
  }
  throw new Error(`the instance did not answer /healthz within ${Math.round(timeoutMs / 1000)} s`);
}
