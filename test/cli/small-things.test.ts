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
