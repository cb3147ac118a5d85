import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import { instancePaths, writeRedisConf } from '../../src/daemon/services/cache/redis-conf.js';

const home = mkdtempSync(join(tmpdir(), 'platform-conf-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));

/**
 * A rotation rewrites redis.conf while a server may be starting and reading it. A reader must
 * only ever see a whole file: an empty or cut one means port 6379 and no password, a server alive
 * but not on its port (seen as starts that never answered during rapid rotations).
 */
describe('redis.conf writes', () => {
  it('a concurrent reader never sees a partial file, and nothing is left beside it', async () => {
    const paths = instancePaths(home, 'c1');
    const settings = (n: number) => ({ port: 20_000 + (n % 1000), password: `pw-${n}`, maxmemory: '4mb', policy: 'allkeys-lru' as const, persistence: n % 2 === 0 });
    writeRedisConf(paths, settings(0));
    const whole = readFileSync(paths.conf, 'utf8');
    expect(whole).toMatch(/^port \d+$/m);
    // A reader thread reads the file as fast as it can while this thread rewrites it.
    const reader = new Worker(
      `const { readFileSync } = require('node:fs');
       const { parentPort, workerData } = require('node:worker_threads');
       let reads = 0, partial = 0, stop = false;
       parentPort.on('message', () => { stop = true; });
       const loop = () => {
         for (let i = 0; i < 200; i++) {
           const text = readFileSync(workerData, 'utf8');
           reads++;
           if (!/^port \\d+$/m.test(text) || !text.trimEnd().endsWith(text.trimEnd().split('\\n').at(-1))) partial++;
           if (!text.includes('appendonly')) partial++;
         }
         if (stop) parentPort.postMessage({ reads, partial }); else setImmediate(loop);
       };
       loop();`,
      { eval: true, workerData: paths.conf },
    );
    const started = Date.now();
    let writes = 0;
    while (Date.now() - started < 400) {
      writeRedisConf(paths, settings(++writes));
      await new Promise((r) => setImmediate(r));
    }
    const result = await new Promise<{ reads: number; partial: number }>((resolve) => {
      reader.once('message', resolve);
      reader.postMessage('stop');
    });
    await reader.terminate();
    expect(writes).toBeGreaterThan(50);
    expect(result.reads).toBeGreaterThan(50);
    expect(result.partial).toBe(0);
    expect(readdirSync(paths.dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    expect(statSync(paths.conf).mode & 0o777).toBe(0o600);
  });
});
