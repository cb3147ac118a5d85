import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestDaemon } from '../helpers/daemon.js';
import { HELLO_PY, archive, deployForm } from '../agents/helpers.js';

/** Deploys the hello function as `token`'s agent: knowledge hangs off the agent row, ready or not. */
export async function deployAgent(d: TestDaemon, token: string, name: string, project: string): Promise<void> {
  const r = await deployForm(d, token, { name, framework: 'function' }, archive({ 'main.py': HELLO_PY }), `?project=${project}`);
  if (r.status !== 202) throw new Error(`deploy ${name}: ${r.status} ${JSON.stringify(r.body)}`);
}

/**
 * A test double of an OpenAI-compatible embedding endpoint: words map to a few concept axes
 * (car and automobile point the same way), so vector search finds what full text cannot. An input
 * containing FAIL makes it answer 500. Records every request it served.
 */
const CONCEPTS: Record<string, number> = { car: 0, automobile: 0, vehicle: 0, engine: 0, dog: 1, puppy: 1, canine: 1, bird: 2, sparrow: 2, recipe: 3, soup: 3, cooking: 3 };
export async function startEmbeddingStub(): Promise<{ url: string; requests: Array<{ model: string; input: string[]; auth?: string }>; close(): Promise<void> }> {
  const requests: Array<{ model: string; input: string[]; auth?: string }> = [];
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const body = JSON.parse(raw) as { model: string; input: string[] };
      requests.push({ ...body, auth: req.headers.authorization });
      if (req.url !== '/v1/embeddings' || body.input.some((t) => t.includes('FAIL'))) {
        res.writeHead(500).end('{"error":"stub refuses"}');
        return;
      }
      const data = body.input.map((text, index) => {
        const v = [0, 0, 0, 0, 0.01];
        for (const w of text.toLowerCase().match(/[a-z]+/g) ?? []) {
          const axis = CONCEPTS[w.replace(/s$/, '')];
          if (axis !== undefined) v[axis]! += 1;
        }
        return { object: 'embedding', index, embedding: v };
      });
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data, model: body.model }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    requests,
    close: () => new Promise((r) => server.close(() => r())),
  };
}
