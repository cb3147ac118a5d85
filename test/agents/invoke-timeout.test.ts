import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliSandbox } from '../helpers/cli.js';

// `platform invoke --timeout` against a real function whose own timeout_seconds is 2 s
// (docs/decisions/agents.md, "Request timeouts").
const sb = cliSandbox({ PLATFORM_SCALE_TO_ZERO_SECONDS: '120' });
const work = mkdtempSync(join(tmpdir(), 'platform-invoke-timeout-'));
const dir = join(work, 'sleeper');

beforeAll(async () => {
  expect((await sb.run(['init', dir, '--template', 'function-python'])).exitCode).toBe(0);
  writeFileSync(join(dir, 'main.py'), 'import time\n\ndef handle(event):\n    time.sleep(float(event.get("message") or 0))\n    return {"slept": event.get("message")}\n');
  const r = await sb.run(['deploy', dir, '--config', '{"timeout_seconds":2}']);
  expect(r.exitCode, r.stderr).toBe(0);
}, 120_000);
afterAll(async () => {
  await sb.stop();
  rmSync(work, { recursive: true, force: true });
});

describe('platform invoke --timeout', { timeout: 60_000 }, () => {
  it('answers within the wait; a shorter --timeout ends the wait on the client with a clear message', async () => {
    const [fast, cut] = await Promise.all([
      sb.run(['invoke', 'sleeper', '-m', '0', '--json']),
      sb.run(['invoke', 'sleeper', '-m', '1.5', '--timeout', '1']),
    ]);
    expect(fast.exitCode, fast.stderr).toBe(0);
    expect(fast.json).toMatchObject({ slept: '0' });
    expect(cut.exitCode).not.toBe(0);
    expect(cut.stderr).toMatch(/no answer from http:\/\/127\.0\.0\.1:\d+ within 1 s/);
    expect(cut.stderr).toMatch(/raise --timeout/);
  });

  it("by default the CLI outwaits the agent, so the daemon's 504 at timeout_seconds is what the user sees", async () => {
    const t0 = Date.now();
    const r = await sb.run(['invoke', 'sleeper', '-m', '5']);
    expect(r.exitCode, r.stdout + r.stderr).not.toBe(0);
    expect(r.stderr).toMatch(/did not answer within 2 s/);
    expect(Date.now() - t0).toBeLessThan(5_000 + 3_000);
  });
});
