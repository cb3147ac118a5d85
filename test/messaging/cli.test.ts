import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cliSandbox } from '../helpers/cli.js';

const cli = cliSandbox();
// Each CLI run is a fresh node process; on a loaded 2-core machine that is seconds, so these
// tests get a long timeout and keep the number of invocations small.
const SLOW = 180_000;
afterAll(() => cli.stop(), 60_000);

const until = async (fn: () => Promise<boolean>) => {
  for (let i = 0; i < 100 && !(await fn()); i++) await new Promise((r) => setTimeout(r, 20));
};

describe('messaging CLI (built binary against a real daemon)', () => {
  beforeAll(async () => {
    const r = await cli.run(['daemon', 'start', '--json']);
    expect(r.exitCode, r.stderr).toBe(0);
  }, SLOW);

  it('topics create, get, list, update (local context defaults to project default)', async () => {
    const c = await cli.run(['topics', 'create', 'orders', '--max-bytes', '32Mi', '--max-age', '24h', '--json']);
    expect(c.exitCode, c.stderr).toBe(0);
    expect(c.json).toMatchObject({ name: 'orders', max_bytes: '32Mi', max_age: '24h', state: 'pending' });
    await until(async () => (await cli.run(['topics', 'get', 'orders', '--json'])).json?.ready === true);
    // Independent reads run side by side: each CLI run is a node process start.
    const [human, list] = await Promise.all([cli.run(['topics', 'get', 'orders']), cli.run(['topics', 'list'])]);
    expect(human.stdout).toMatch(/^state\s+ready$/m);
    expect(human.stdout).toMatch(/^stats\.published\s+0$/m);
    expect(list.stdout.split('\n')[0]).toMatch(/^NAME\s+STATE\s+MAX BYTES\s+MAX AGE\s+DISCARD\s+SUBS\s+PUBLISHED\s+BACKLOG BYTES$/);
    expect(list.stdout).toMatch(/^orders\s+ready\s+32Mi\s+24h\s+old\s+0\s+0\s+0$/m);
    const u = await cli.run(['topics', 'update', 'orders', '--max-age', '', '--discard', 'new', '--json']);
    expect(u.exitCode, u.stderr).toBe(0);
    expect(u.json).toMatchObject({ discard: 'new', max_bytes: '32Mi' });
    expect(u.json.max_age).toBeUndefined();
    const json = await cli.run(['topics', 'list', '--json', '--project', 'default']);
    expect(json.json.topics.map((t: any) => t.name)).toEqual(['orders']);
  }, SLOW);

  it('subscriptions create, list, get, update', async () => {
    const c = await cli.run(['subscriptions', 'create', 'orders', 'billing', '--ack-deadline', '60', '--json']);
    expect(c.exitCode, c.stderr).toBe(0);
    expect(c.json).toMatchObject({ name: 'billing', topic: 'orders', type: 'shared', ack_deadline_seconds: 60 });
    await until(async () => (await cli.run(['subscriptions', 'get', 'orders', 'billing', '--json'])).json?.ready === true);
    const list = await cli.run(['subscriptions', 'list', 'orders']);
    expect(list.stdout).toMatch(/^billing\s+shared\s+ready\s+pull\s+60s\s+0\s+0\s+0$/m);
    const [u, bad] = await Promise.all([
      cli.run(['subscriptions', 'update', 'orders', 'billing', '--max-ack-pending', '100', '--json']),
      cli.run(['subscriptions', 'create', 'orders', 'x', '--type', 'exclusive']),
    ]);
    expect(u.json).toMatchObject({ max_ack_pending: 100, ack_deadline_seconds: 60 });
    expect(bad.exitCode).toBe(1);
    expect(bad.stderr).toMatch(/exclusive type cannot be read through this API/);
  }, SLOW);

  it('publish (text, data, NDJSON file with attributes and key), pull, ack', async () => {
    const one = await cli.run(['publish', 'orders', '--text', 'order 42 paid', '--attr', 'kind=payment', '--key', 'order-42', '--json']);
    expect(one.exitCode, one.stderr).toBe(0);
    expect(one.json).toMatchObject({ message_ids: [expect.stringMatching(/^\d+:\d+$/)], published: 1, requested: 1 });
    const two = await cli.run(['publish', 'orders', '--data', Buffer.from([0, 255]).toString('base64')]);
    expect(two.stdout).toMatch(/^MESSAGE ID\n\d+:\d+$/);
    const file = join(mkdtempSync(join(tmpdir(), 'ndjson-')), 'events.ndjson');
    writeFileSync(file, Array.from({ length: 120 }, (_, i) => JSON.stringify({ text: `event ${i}`, attributes: { n: String(i) } })).join('\n') + '\n');
    const many = await cli.run(['publish', 'orders', '--file', file, '--attr', 'source=file', '--json']);
    expect(many.exitCode, many.stderr).toBe(0);
    expect(many.json.published).toBe(120);

    const pulled = await cli.run(['pull', 'orders/billing', '--max', '2', '--wait', '1']);
    expect(pulled.exitCode, pulled.stderr).toBe(0);
    const lines = pulled.stdout.split('\n');
    expect(lines[0]).toMatch(/^ID\s+ATTEMPT\s+KEY\s+DATA\s+ATTRIBUTES\s+ACK ID$/);
    expect(lines[1]).toMatch(/^\d+:\d+\s+1\s+order-42\s+order 42 paid\s+kind=payment\s+\S+$/);
    expect(lines[2]).toMatch(/^\d+:\d+\s+1\s+-\s+base64:AP8=\s+-\s+\S+$/);
    const ackIds = lines.slice(1).map((l) => l.trim().split(/\s+/).pop()!);
    const acked = await cli.run(['ack', 'orders/billing', ...ackIds]);
    expect(acked.exitCode, acked.stderr).toBe(0);
    expect(acked.stdout).toBe('acknowledged 2 of 2');

    // max_ack_pending is 100: --ack pulls and acknowledges in steps.
    let seen = 0;
    for (let i = 0; i < 4 && seen < 120; i++) {
      const r = await cli.run(['pull', 'billing', '--topic', 'orders', '--max', '100', '--wait', '0', '--ack', '--json']);
      expect(r.exitCode, r.stderr).toBe(0);
      for (const m of r.json.messages) expect(m.attributes).toMatchObject({ source: 'file' });
      seen += r.json.messages.length;
    }
    expect(seen).toBe(120);
    const empty = await cli.run(['pull', 'orders/billing', '--wait', '0']);
    expect(empty.stdout).toBe('no messages');
  }, SLOW);

  it('pubsub quota and usage', async () => {
    const [q, u] = await Promise.all([cli.run(['pubsub', 'quota', '--json']), cli.run(['pubsub', 'usage'])]);
    expect(q.json).toMatchObject({ limit_bytes: 1024 ** 3, allocated_bytes: 32 * 1024 ** 2, topics: 1, provisioned: true });
    expect(u.stdout).toMatch(/^orders\s+122\s+122\s+/m);
    expect(u.stdout).toMatch(/^total\s+122\s+/m);
  }, SLOW);

  it('errors: usage mistakes exit 2, API refusals exit 1 with the envelope under --json', async () => {
    const [noTopic, missing, badAttr, jsonAsData] = await Promise.all([
      cli.run(['pull', 'billing']),
      cli.run(['topics', 'get', 'nope', '--json']),
      cli.run(['publish', 'orders', '--text', 'x', '--attr', 'novalue']),
      cli.run(['publish', 'orders', '--data', '{"a":1}']),
    ]);
    // Plain text given to --data is told which flag takes it, before anything is sent.
    expect(jsonAsData.exitCode).toBe(2);
    expect(jsonAsData.stderr).toMatch(/--data takes the payload in base64/);
    expect(jsonAsData.stderr).toMatch(/use --text/);
    expect(noTopic.exitCode).toBe(2);
    expect(noTopic.stderr).toMatch(/TOPIC\/SUB/);
    expect(missing.exitCode).toBe(1);
    expect(missing.json).toMatchObject({ status: 404, error: 'topic nope not found', request_id: expect.stringMatching(/^req_/) });
    expect(badAttr.exitCode).toBe(2);
  }, SLOW);

  it('delete subscription then topic', async () => {
    const s = await cli.run(['subscriptions', 'delete', 'orders', 'billing', '--yes']);
    expect(s.stdout).toBe('subscription billing is being deleted');
    const t = await cli.run(['topics', 'delete', 'orders', '--json', '--yes']);
    expect(t.json).toEqual({ name: 'orders', state: 'deleting', ready: false });
    await until(async () => (await cli.run(['topics', 'list', '--json'])).json.topics.length === 0);
    expect((await cli.run(['topics', 'list'])).stdout).toBe('no topics');
  }, SLOW);
});
