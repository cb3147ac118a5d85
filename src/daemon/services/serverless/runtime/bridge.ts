import { lookup } from 'node:dns/promises';
import { chmodSync, chownSync, mkdirSync, rmSync } from 'node:fs';
import { connect, createServer, isIP, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { egressVerdict, type EgressPolicy } from '../../../egress.js';
import { runsAsRoot, SANDBOX_UID } from '../../../runtime/sandbox.js';

const LINE_MAX = 300;

/**
 * The daemon's end of every door (docs/decisions/serverless.md, Isolation): a unix socket server
 * at `<home>/serverless/bridge/bridge.sock`. A door sends one line `<host> <port>\n`; the bridge
 * resolves the host, checks every address against the egress policy, and answers `OK\n` and pipes
 * to the checked address, or `ERR <reason>\n` and closes. Its directory is 0711 and the socket
 * 0666: the door runs as the sandbox's user, and what the bridge reaches (the daemon's own ports,
 * the internet) any host user reaches anyway; what must stay private is each door's own socket.
 */
export class Bridge {
  readonly path: string;
  readonly dir: string;
  private server?: Server;
  private readonly open = new Set<Socket>();

  constructor(
    home: string,
    private readonly policy: () => EgressPolicy,
  ) {
    this.dir = join(home, 'serverless', 'bridge');
    this.path = join(this.dir, 'bridge.sock');
  }

  async start(): Promise<void> {
    // Private like the rest of the state directory (0700/0600). The doors run as the sandbox user:
    // a root daemon hands it the directory and the socket, which nothing else outside a door reaches.
    mkdirSync(this.dir, { recursive: true });
    chmodSync(this.dir, 0o700);
    if (runsAsRoot()) chownSync(this.dir, SANDBOX_UID, SANDBOX_UID);
    rmSync(this.path, { force: true });
    const server = createServer({ allowHalfOpen: true }, (s) => this.serve(s));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.path, () => resolve());
    });
    chmodSync(this.path, 0o600);
    if (runsAsRoot()) chownSync(this.path, SANDBOX_UID, SANDBOX_UID);
    server.on('error', () => undefined);
    this.server = server;
  }

  async stop(): Promise<void> {
    for (const s of this.open) s.destroy();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
    rmSync(this.path, { force: true });
  }

  private serve(door: Socket): void {
    this.open.add(door);
    door.once('close', () => this.open.delete(door));
    door.on('error', () => door.destroy());
    door.setTimeout(10_000, () => door.destroy());
    let line = '';
    const onData = (c: Buffer) => {
      line += c.toString('latin1');
      const nl = line.indexOf('\n');
      if (nl < 0) {
        if (line.length > LINE_MAX) door.destroy();
        return;
      }
      door.off('data', onData);
      door.pause();
      door.setTimeout(0);
      const rest = line.slice(nl + 1);
      if (rest) door.unshift(Buffer.from(rest, 'latin1'));
      const m = /^(\S{1,253}) (\d{1,5})$/.exec(line.slice(0, nl));
      if (!m) return void door.end('ERR malformed request: send "<host> <port>"\n');
      void this.dial(door, m[1]!.replace(/^\[(.*)\]$/, '$1'), Number(m[2]));
    };
    door.on('data', onData);
  }

  private async dial(door: Socket, host: string, port: number): Promise<void> {
    const refuse = (why: string) => void door.end(`ERR ${why.replace(/\n/g, ' ')}\n`);
    if (!(port > 0 && port < 65536)) return refuse(`port ${port} is out of range`);
    let addresses: string[];
    try {
      addresses = isIP(host) ? [host] : (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
    } catch (e) {
      return refuse(`${host} does not resolve (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
    }
    if (!addresses.length) return refuse(`${host} does not resolve`);
    const policy = this.policy();
    // Every address is checked: a name that resolves to the internet and to loopback is refused.
    for (const a of addresses) {
      const v = egressVerdict(host, a, port, policy);
      if (!v.ok) return refuse(v.reason);
    }
    const up = connect({ host: addresses[0]!, port, allowHalfOpen: true });
    this.open.add(up);
    up.once('close', () => this.open.delete(up));
    up.setTimeout(15_000, () => up.destroy(new Error('connect timed out')));
    let connected = false;
    up.once('error', (e) => {
      if (!connected) refuse(`${host}:${port}: ${(e as NodeJS.ErrnoException).code ?? e.message}`);
    });
    up.once('connect', () => {
      connected = true;
      up.setTimeout(0);
      door.write('OK\n');
      const cut = () => {
        up.destroy();
        door.destroy();
      };
      up.on('error', cut);
      door.on('error', cut);
      up.once('close', cut);
      door.once('close', cut);
      door.pipe(up);
      up.pipe(door);
    });
  }
}
