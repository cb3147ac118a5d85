import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { watchFolder } from '../../src/dev/watcher.js';
import { errorTail } from '../../src/dev/output.js';
import { parseLogLine } from '../../src/dev/log-stream.js';

/**
 * What `platform dev` redeploys on, against the real filesystem: saves by rename (how sed -i and
 * many editors write, which Node 20's recursive watch loses after the first), bursts, folders
 * made after the start, and what never counts (dependency trees, what .gitignore leaves out).
 */
const dir = mkdtempSync(join(tmpdir(), 'platform-dev-watch-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the dev watcher', () => {
  const bursts: Array<{ path: string }> = [];
  let waiting: ((b: { path: string }) => void) | undefined;
  writeFileSync(join(dir, 'main.py'), 'v0\n');
  writeFileSync(join(dir, '.gitignore'), '*.log\n');
  mkdirSync(join(dir, 'node_modules'));
  const watcher = watchFolder(dir, (b) => {
    bursts.push(b);
    waiting?.(b);
  });
  afterAll(() => watcher.close());
  const next = () =>
    new Promise<{ path: string }>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no change seen; bursts so far: ${JSON.stringify(bursts)}`)), 5000);
      waiting = (b) => {
        clearTimeout(timer);
        waiting = undefined;
        resolve(b);
      };
    });
  const saveByRename = (name: string, content: string) => {
    writeFileSync(join(dir, `.${name}.tmp~`), content);
    renameSync(join(dir, `.${name}.tmp~`), join(dir, name));
  };

  it('sees every save made by renaming a new file over the old one', async () => {
    for (const v of ['v1', 'v2', 'v3']) {
      const seen = next();
      saveByRename('main.py', `${v}\n`);
      expect((await seen).path).toBe('main.py');
    }
  });

  it('names the saved file, not the temporary file a save by rename went through (sed -i writes a temporary sed98m1vF)', async () => {
    const seen = next();
    writeFileSync(join(dir, 'sedAb12Cd'), 'v3b\n');
    renameSync(join(dir, 'sedAb12Cd'), join(dir, 'main.py'));
    expect((await seen).path).toBe('main.py');
  });

  it('makes one burst of quick writes, and ignores dependency trees and what .gitignore leaves out', async () => {
    const before = bursts.length;
    const seen = next();
    writeFileSync(join(dir, 'node_modules', 'dep.js'), 'x');
    writeFileSync(join(dir, 'debug.log'), 'x');
    writeFileSync(join(dir, 'payload.json'), '{}');
    writeFileSync(join(dir, 'main.py'), 'v4\n');
    writeFileSync(join(dir, 'main.py'), 'v5\n');
    expect((await seen).path).toBe('main.py');
    expect(bursts.length).toBe(before + 1);
  });

  it('follows folders made after it started', async () => {
    const made = next();
    mkdirSync(join(dir, 'lib'));
    expect((await made).path).toBe('lib');
    const inside = next();
    writeFileSync(join(dir, 'lib', 'util.py'), 'x\n');
    expect((await inside).path).toBe('lib/util.py');
  });
});

describe('what dev shows', () => {
  it('a failure: its headline and its last lines', () => {
    const lines = ['headline', ...Array.from({ length: 30 }, (_, i) => `line ${i}`)];
    expect(errorTail(lines.join('\n'))).toEqual(['headline', '… (20 lines left out)', ...lines.slice(-10)]);
    expect(errorTail('one\ntwo\n')).toEqual(['one', 'two']);
    // Node's loader frames are left out, so a syntax error's file and line stay in the tail.
    const syntax = [
      'revision fn-00003 did not become ready: the instance exited while starting, before it was ready',
      'index.js:2',
      '',
      '',
      '',
      'SyntaxError: Unexpected end of input',
      '    at compileSourceTextModule (node:internal/modules/esm/utils:346:16)',
      '    at ModuleLoader.moduleStrategy (node:internal/modules/esm/translators:146:18)',
      '    at #translate (node:internal/modules/esm/loader:497:12)',
      '    at ModuleLoader.loadAndTranslate (node:internal/modules/esm/loader:544:27)',
      '    at async ModuleJob._link (node:internal/modules/esm/module_job:148:19)',
      '    at handle (/src/index.js:4:9)',
      '',
      'Node.js v20.20.2',
    ];
    expect(errorTail(syntax.join('\n'))).toEqual([...syntax.slice(0, 6), ...syntax.slice(11)]);
  });

  it('a log line with its revision; anything else is not a log line', () => {
    expect(parseLogLine('2026-11-27T10:31:14.694Z hello-00002-0d6d92 stdout: greeting x')).toEqual({
      ts: '2026-11-27T10:31:14.694Z',
      instance: 'hello-00002-0d6d92',
      revision: 'hello-00002',
      stream: 'stdout',
      message: 'greeting x',
    });
    expect(parseLogLine('agent hello has no running instance: it is scaled to zero')).toBeUndefined();
  });
});
