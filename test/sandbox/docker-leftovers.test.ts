import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dockerSkipReason } from '../../bench/lib.js';
import { containerOwner } from '../../src/daemon/services/sandbox/backends.js';
import type { TestDaemon } from '../helpers/daemon.js';
import { startSandboxDaemon } from './helpers.js';

/**
 * A daemon killed with sandbox containers running leaves them behind; the next daemon of the same
 * state directory removes them at start, and never another state directory's.
 */
const IMAGE = 'platform-python:local';
const skip = await dockerSkipReason(IMAGE);
const home = mkdtempSync(join(tmpdir(), 'platform-sandbox-leftovers-'));
const other = mkdtempSync(join(tmpdir(), 'platform-sandbox-other-'));
const names = [`platform-sandbox-leftover-${process.pid}`, `platform-sandbox-foreign-${process.pid}`];
let d: TestDaemon | undefined;
afterAll(async () => {
  await d?.close();
  if (!skip) execFileSync('docker', ['rm', '-f', ...names], { stdio: 'ignore' });
  rmSync(home, { recursive: true, force: true });
  rmSync(other, { recursive: true, force: true });
});

const running = (name: string) => execFileSync('docker', ['ps', '-q', '--filter', `name=^${name}$`], { encoding: 'utf8' }).trim() !== '';

describe.skipIf(Boolean(skip))('docker leftovers', () => {
  it('removes its own leftover containers at start, not another daemon’s', async () => {
    for (const [name, owner] of [[names[0]!, containerOwner(home)], [names[1]!, containerOwner(other)]] as const) {
      execFileSync('docker', ['run', '-d', '--rm', '--name', name, '--network', 'none', '--label', 'platform.sandbox=1', '--label', `platform.sandbox.owner=${owner}`, IMAGE, 'sleep', '120'], { stdio: 'ignore' });
    }
    expect(running(names[0]!)).toBe(true);
    d = await startSandboxDaemon({ mode: 'docker', image: IMAGE, poolTarget: 0 }, home);
    expect(running(names[0]!)).toBe(false);
    expect(running(names[1]!)).toBe(true);
  }, 60_000);
});
