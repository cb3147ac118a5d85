import { connect as netConnect, type Socket } from 'node:net';

export type RespReply = string | number | null | RespError | RespReply[];

export class RespError extends Error {}

/** Why a command could not be answered: the network (unreachable) or the server (an error reply). */
export class RedisUnreachable extends Error {}

/**
 * Parses one RESP2 reply from the front of a buffer; returns undefined when more bytes are needed.
 * Only what the supervisor reads (PING, AUTH, INFO) has to work, but arrays are handled too.
 */
function parse(buf: Buffer, at = 0): { value: RespReply; end: number } | undefined {
  const eol = buf.indexOf('\r\n', at);
  if (eol < 0) return undefined;
  const type = String.fromCharCode(buf[at]!);
  const line = buf.toString('utf8', at + 1, eol);
  switch (type) {
    case '+':
      return { value: line, end: eol + 2 };
    case '-':
      return { value: new RespError(line), end: eol + 2 };
    case ':':
      return { value: Number(line), end: eol + 2 };
    case '$': {
      const len = Number(line);
      if (len < 0) return { value: null, end: eol + 2 };
      if (buf.length < eol + 2 + len + 2) return undefined;
      return { value: buf.toString('utf8', eol + 2, eol + 2 + len), end: eol + 2 + len + 2 };
    }
    case '*': {
      const n = Number(line);
      if (n < 0) return { value: null, end: eol + 2 };
      const items: RespReply[] = [];
      let pos = eol + 2;
      for (let i = 0; i < n; i++) {
        const item = parse(buf, pos);
        if (!item) return undefined;
        items.push(item.value);
        pos = item.end;
      }
      return { value: items, end: pos };
    }
    default:
      throw new RespError(`unexpected reply type ${JSON.stringify(type)}`);
  }
}

const encode = (args: string[]) => `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`;

/**
 * Sends a pipeline of commands on a fresh plaintext connection and returns every reply, within a
 * total time budget. The daemon's own probes use this instead of a full client: no reconnection,
 * no offline queue, a hard deadline, and nothing left running after the answer.
 */
export function redisPipeline(host: string, port: number, commands: string[][], timeoutMs: number): Promise<RespReply[]> {
  return new Promise((resolve, reject) => {
    let socket: Socket | undefined;
    let buf = Buffer.alloc(0);
    const replies: RespReply[] = [];
    let done = false;
    const finish = (err: Error | undefined) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket?.destroy();
      if (err) reject(err);
      else resolve(replies);
    };
    const timer = setTimeout(() => finish(new RedisUnreachable(`no answer from ${host}:${port} within ${timeoutMs} ms`)), timeoutMs);
    socket = netConnect({ host, port }, () => socket!.write(commands.map(encode).join('')));
    socket.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      try {
        for (;;) {
          const r = parse(buf);
          if (!r) break;
          replies.push(r.value);
          buf = buf.subarray(r.end);
          if (replies.length === commands.length) return finish(undefined);
        }
      } catch (e) {
        finish(e as Error);
      }
    });
    socket.on('error', (e) => finish(new RedisUnreachable(`cannot connect to ${host}:${port}: ${(e as NodeJS.ErrnoException).code ?? e.message}`)));
    socket.on('close', () => finish(new RedisUnreachable(`connection to ${host}:${port} closed before the answer`)));
  });
}

/** AUTH as the default user, then one command; an error reply of either becomes a RespError. */
export async function authedCommand(port: number, password: string, command: string[], timeoutMs: number): Promise<RespReply> {
  const [auth, reply] = await redisPipeline('127.0.0.1', port, [['AUTH', 'default', password], command], timeoutMs);
  if (auth instanceof RespError) throw auth;
  if (reply instanceof RespError) throw reply;
  return reply!;
}

/** True when the server answers PING with this password. */
export async function pingWithPassword(port: number, password: string, timeoutMs: number): Promise<boolean> {
  try {
    return (await authedCommand(port, password, ['PING'], timeoutMs)) === 'PONG';
  } catch {
    return false;
  }
}
