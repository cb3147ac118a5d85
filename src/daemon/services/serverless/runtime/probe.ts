import { connect } from 'node:net';

/**
 * Waits until something accepts TCP connections on 127.0.0.1:port, as Knative's default
 * readiness probe does (a service is any web server: there is no /healthz to ask). Fails as soon
 * as the instance exits, or at the deadline.
 */
export async function waitForPort(port: number, timeoutMs: number, exited: Promise<unknown>): Promise<void> {
  let gone = false;
  void exited.then(() => (gone = true));
  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    if (gone) throw new PortError('exited');
    if (await accepts(port)) {
      if (gone) throw new PortError('exited');
      return;
    }
    await new Promise((r) => setTimeout(r, Date.now() - started < 2000 ? 5 : 50));
  }
  throw new PortError('timeout');
}

export class PortError extends Error {
  constructor(readonly kind: 'exited' | 'timeout') {
    super(kind);
  }
}

export function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ port, host: '127.0.0.1' });
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(1000, () => done(false));
    s.once('connect', () => done(true));
    s.once('error', () => done(false));
  });
}
