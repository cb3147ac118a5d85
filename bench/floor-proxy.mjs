/**
 * The floor of the invoke overhead (issue 26, bench/daemon-speed.ts): the barest node reverse
 * proxy in front of one instance. node:http server, undici's request with a keep-alive pool
 * (undici's global dispatcher, as the daemon's invoke proxy uses), the instance's secret header,
 * the body read whole both ways. No auth, no session turn, no JSON, no routing: whatever it adds
 * over calling the instance directly, any node proxy on this machine adds.
 * Env: FLOOR_UPSTREAM (http://127.0.0.1:<port>/), FLOOR_SECRET. Prints its port on stdout.
 */
import { createServer } from 'node:http';
import { request } from 'undici';

const upstream = process.env.FLOOR_UPSTREAM;
const headers = { 'content-type': 'application/json', 'x-platform-instance-secret': process.env.FLOOR_SECRET };

async function readAll(stream) {
  const chunks = [];
  for await (const c of stream) chunks.push(c);
  return Buffer.concat(chunks);
}

const server = createServer(async (req, res) => {
  try {
    const body = await readAll(req);
    const up = await request(upstream, { method: 'POST', headers, body });
    const out = await readAll(up.body);
    res.writeHead(up.statusCode, { 'content-type': 'application/json', 'content-length': out.length });
    res.end(out);
  } catch (e) {
    res.writeHead(502);
    res.end(String(e));
  }
});
server.keepAliveTimeout = 120_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`));
