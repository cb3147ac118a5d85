import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliSandbox } from '../helpers/cli.js';

/**
 * Issue 25 §3, "small things users trip on", through the built CLI against the daemon it starts.
 * New topics stay pending for a second here so `--wait` has something to wait for.
 */
const cli = cliSandbox({ PLATFORM_PUBSUB_CONVERGE_MS: '1000' });
const SLOW = 120_000;
afterAll(() => cli.stop(), 60_000);

beforeAll(async () => {
  const r = await cli.run(['daemon', 'start', '--json']);
  expect(r.exitCode, r.stderr).toBe(0);
}, SLOW);

describe('topics create --wait', () => {
  it('without --wait the topic is pending; with --wait it is ready and takes a publish at once', async () => {
    const [quick, waited] = await Promise.all([
      cli.run(['topics', 'create', 'quick', '--json']),
      cli.run(['topics', 'create', 'waited', '--wait']),
    ]);
    expect(quick.exitCode, quick.stderr).toBe(0);
    expect(quick.json).toMatchObject({ name: 'quick', state: 'pending', ready: false });
    expect(waited.exitCode, waited.stderr).toBe(0);
    expect(waited.stdout).toMatch(/^state\s+ready$/m);
    expect(waited.stderr).toContain('topic waited created and ready');
    const published = await cli.run(['publish', 'waited', '--text', 'hello', '--json']);
    expect(published.exitCode, published.stderr).toBe(0);
    expect(published.json.published).toBe(1);
  }, SLOW);
});

describe('pull without --ack', () => {
  it('says on stderr that the messages are leased, when they come back and how to acknowledge them', async () => {
    const sub = await cli.run(['subscriptions', 'create', 'waited', 'reader', '--ack-deadline', '30']);
    expect(sub.exitCode, sub.stderr).toBe(0);
    for (let i = 0; i < 100 && (await cli.run(['subscriptions', 'get', 'waited', 'reader', '--json'])).json?.ready !== true; i++) await new Promise((r) => setTimeout(r, 100));
    const two = await cli.run(['publish', 'waited', '--file', '-'], { input: '{"text":"one"}\n{"text":"two"}\n' });
    expect(two.exitCode, two.stderr).toBe(0);
    const pulled = await cli.run(['pull', 'waited/reader', '--max', '1', '--wait', '5']);
    expect(pulled.exitCode, pulled.stderr).toBe(0);
    expect(pulled.stdout).toMatch(/one/);
    expect(pulled.stderr).toContain('this message is leased, not removed: unless acknowledged within 30 s they are delivered again');
    expect(pulled.stderr).toContain('`platform ack waited/reader ACK_ID...`');
    expect(pulled.stderr).toContain('or pull with --ack');
    // Under --json stdout carries only the result and the note, meant for people, is left out.
    const asJson = await cli.run(['pull', 'reader', '--topic', 'waited', '--max', '1', '--wait', '5', '--json']);
    expect(asJson.exitCode, asJson.stderr).toBe(0);
    expect(asJson.json.messages).toHaveLength(1);
    expect(asJson.stderr).toBe('');
    expect((await cli.run(['publish', 'waited', '--text', 'three'])).exitCode).toBe(0);
    const acked = await cli.run(['pull', 'waited/reader', '--wait', '5', '--ack']);
    expect(acked.stderr).toBe('acknowledged 1');
    const ackID = pulled.stdout.split('\n')[1]!.trim().split(/\s+/).pop()!;
    expect((await cli.run(['ack', 'waited/reader', ackID])).stdout).toBe('acknowledged 1 of 1');
  }, SLOW);
});
