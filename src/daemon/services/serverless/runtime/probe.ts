import { connect } from 'node:net';

/**
 * Waits until the instance's server accepts connections, as Knative's default readiness probe
 * does (a service is any web server: there is no /healthz to ask): `listening` asks once, over
 * TCP for a host port or through the door's probe.sock for an isolated instance. Fails as soon
 * as the instance exits, or at the deadline.
 */
export async function waitListening(listening: () => Promise<boolean>, timeoutMs: number, exited: Promise<unknown>): Promise<void> {
  let gone = false;
  void exited.then(() => (gone = true));
  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    if (gone) throw new PortError('exited');
    if (await listening()) {
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

/** A TCP connect to 127.0.0.1:port succeeds. */
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

/**
 * The door's answer on probe.sock: it tries 127.0.0.1:$PORT inside the namespace and writes `1`
 * (listening) or `0`. No door yet (or no more) is not listening.
 */
export function doorSaysListening(probe: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(probe);
    let said = '';
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(2000, () => done(false));
    s.on('data', (c: Buffer) => (said += c.toString('latin1')));
    s.once('end', () => done(said === '1'));
    s.once('error', () => done(false));
  });
}
