import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisUnreachable, RespError, authedCommand, redisPipeline } from '../../src/daemon/services/cache/resp.js';

/** The daemon's tiny RESP client against a scripted server: replies split across packets, errors, deadlines. */
describe('cache RESP probe client', () => {
  let server: Server;
  let port: number;
  let script: (data: string, write: (s: string) => void) => void;

  beforeAll(async () => {
    server = createServer((sock) => {
      sock.on('data', (b) => script(b.toString(), (s) => sock.write(s)));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => server.close());

  it('reads simple, bulk, integer, array and null replies, even split across packets', async () => {
    script = (_d, write) => {
      const all = '+OK\r\n$5\r\nhello\r\n:42\r\n*2\r\n$1\r\na\r\n$-1\r\n$-1\r\n';
      for (let i = 0; i < all.length; i += 3) setTimeout(() => write(all.slice(i, i + 3)), i);
    };
    const replies = await redisPipeline('127.0.0.1', port, [['A'], ['B'], ['C'], ['D'], ['E']], 2000);
    expect(replies).toEqual(['OK', 'hello', 42, ['a', null], null]);
  });

  it('an error reply of AUTH or of the command becomes a RespError', async () => {
    script = (_d, write) => write('-WRONGPASS invalid username-password pair\r\n+PONG\r\n');
    await expect(authedCommand(port, 'pw', ['PING'], 2000)).rejects.toBeInstanceOf(RespError);
    script = (_d, write) => write('+OK\r\n-ERR nope\r\n');
    await expect(authedCommand(port, 'pw', ['INFO'], 2000)).rejects.toThrow(/ERR nope/);
  });

  it('silence past the budget and refused connections are RedisUnreachable', async () => {
    script = () => {};
    const t = Date.now();
    await expect(authedCommand(port, 'pw', ['PING'], 150)).rejects.toBeInstanceOf(RedisUnreachable);
    expect(Date.now() - t).toBeLessThan(1000);
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', () => r()));
    const deadPort = (closed.address() as { port: number }).port;
    await new Promise<void>((r) => closed.close(() => r()));
    await expect(authedCommand(deadPort, 'pw', ['PING'], 1000)).rejects.toThrow(/cannot connect.*ECONNREFUSED/);
  });
});
