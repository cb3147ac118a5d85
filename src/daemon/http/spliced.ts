import { Duplex } from 'node:stream';

/**
 * A connection whose first bytes were rewritten: reads start with `head`, then continue with the
 * socket's own stream; writes, timeouts and addresses are the socket's. Node's HTTP server takes
 * any such stream as a connection (`server.emit('connection', stream)`).
 */
export class Spliced extends Duplex {
  constructor(
    private readonly socket: Duplex,
    head: Buffer,
  ) {
    super({ allowHalfOpen: true });
    this.push(head);
    socket.on('data', (chunk: Buffer) => {
      if (!this.push(chunk)) socket.pause();
    });
    socket.on('end', () => this.push(null));
    socket.on('timeout', () => this.emit('timeout'));
    socket.on('error', (e) => this.destroy(e));
    socket.on('close', () => this.destroy());
    socket.resume();
  }

  private get net(): Duplex & Record<string, any> {
    return this.socket as Duplex & Record<string, any>;
  }
  get remoteAddress(): string | undefined {
    return this.net.remoteAddress;
  }
  get remotePort(): number | undefined {
    return this.net.remotePort;
  }
  get remoteFamily(): string | undefined {
    return this.net.remoteFamily;
  }
  get localAddress(): string | undefined {
    return this.net.localAddress;
  }
  get localPort(): number | undefined {
    return this.net.localPort;
  }
  setTimeout(ms: number, cb?: () => void): this {
    this.net.setTimeout?.(ms);
    if (cb) this.once('timeout', cb);
    return this;
  }
  setNoDelay(noDelay?: boolean): this {
    this.net.setNoDelay?.(noDelay);
    return this;
  }
  setKeepAlive(enable?: boolean, delay?: number): this {
    this.net.setKeepAlive?.(enable, delay);
    return this;
  }
  destroySoon(): void {
    this.end();
  }

  override _read(): void {
    this.socket.resume();
  }
  override _write(chunk: Buffer, encoding: BufferEncoding, cb: (err?: Error | null) => void): void {
    this.socket.write(chunk, encoding, cb);
  }
  override _final(cb: (err?: Error | null) => void): void {
    this.socket.end();
    cb();
  }
  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    this.socket.destroy();
    cb(err);
  }
}
