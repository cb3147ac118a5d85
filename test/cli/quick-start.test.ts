/**
 * The CLI's quick start (src/cli/quick-start.ts) and its core's code cache (src/cli/code-cache.ts):
 * the words typed name the command oclif itself would find, a command runs and fails exactly as
 * under oclif's full start, and the code cache is private, rebuilt when it does not fit, and never
 * needed.
 */
import { Config, Plugin } from '@oclif/core';
import { normalizeArgv } from '@oclif/core/help';
import { execa } from 'execa';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quickCommandId } from '../../src/cli/quick-start.js';
import { cliSandbox, type CliResult } from '../helpers/cli.js';

const ROOT = join(import.meta.dirname, '..', '..');
const BUNDLE = join(ROOT, 'dist', 'cli-bundle');
const pjson = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
const manifest = JSON.parse(readFileSync(join(ROOT, 'oclif.manifest.json'), 'utf8')) as { commands: Record<string, { id: string; aliases?: string[]; hiddenAliases?: string[] }> };
/** The command an id or alias stands for. */
const realId = (id: string) => Object.values(manifest.commands).find((c) => c.id === id || c.aliases?.includes(id) || c.hiddenAliases?.includes(id))?.id;

describe('the command the words name', () => {
  it('is the one oclif finds, for every command and alias, with flags, arguments and extra words', async () => {
    const config = await Config.load({ root: ROOT });
    const ids = [...config.commandIDs];
    expect(ids.length).toBeGreaterThan(150);
    let quick = 0;
    for (const id of ids) {
      const words = id.split(':');
      for (const argv of [words, [...words, '--json'], [...words, 'some-name'], [...words, 'a', 'b', '--json'], [...words, 'k=v'], [id, 'x']]) {
        const [oclifId] = normalizeArgv(config, [...argv]);
        const found = config.findCommand(oclifId!);
        const mine = quickCommandId(argv, ROOT, pjson);
        // The quick start answers only for a command (never help), and then names oclif's.
        if (mine !== undefined) {
          quick++;
          expect(found, argv.join(' ')).toBeDefined();
          expect(mine, argv.join(' ')).toBe(realId(oclifId!));
        } else if (found && oclifId !== 'help') {
          throw new Error(`the quick start left \`${argv.join(' ')}\` (oclif: ${oclifId}) to the full start`);
        }
      }
    }
    expect(quick).toBeGreaterThan(ids.length * 3);
  });

  it("stands in for oclif's plugin methods that still exist (an upgrade renaming them would silently read the whole manifest again)", () => {
    for (const method of ['_manifest', 'findCommand', 'load']) expect(typeof (Plugin.prototype as unknown as Record<string, unknown>)[method], method).toBe('function');
  });

  it('leaves help, topics, unknown words and an empty line to the full start', () => {
    for (const argv of [[], ['--help'], ['agents', '--help'], ['agents', 'list', '-h'], ['agents'], ['help', 'agents'], ['nosuch'], ['--json']]) {
      expect(quickCommandId(argv, ROOT, pjson), argv.join(' ')).toBeUndefined();
    }
    // After `--`, a help flag is an argument.
    expect(quickCommandId(['invoke', 'x', '--', '--help'], ROOT, pjson)).toBe('invoke');
  });
});

describe('a command under the quick start', () => {
  const cli = cliSandbox();
  const full = { PLATFORM_NO_QUICK_START: '1' };
  beforeAll(async () => {
    expect((await cli.run(['daemon', 'start', '--json'])).exitCode).toBe(0);
  }, 60_000);
  afterAll(() => cli.stop());

  it.each(
    [
      ['whoami', '--json'],
      ['agents', 'list', '--json'],
      ['agents', 'list'],
      ['agents', 'get', 'nosuch'],
      ['agents', 'get', 'nosuch', '--json'],
      ['agents', 'get'],
      ['agents', 'list', '--nosuch-flag'],
      ['env', 'list', 'nosuch', '--json'],
      ['projects', 'list', '--limit', 'x'],
    ].map((argv) => ({ argv, line: argv.join(' ') })),
  )('$line: the same output and exit code as the full start', async ({ argv }) => {
    const [quick, slow] = await Promise.all([cli.run(argv), cli.run(argv, { env: full })]);
    // Each request has its own id; everything else is the same.
    const same = (r: CliResult) => ({ exit: r.exitCode, out: r.stdout, err: r.stderr }) as Record<string, unknown>;
    const withoutIds = (r: CliResult) => JSON.parse(JSON.stringify(same(r)).replace(/(request_id\\": \\"|request id: )[\w-]+/g, '$1ID'));
    expect(withoutIds(quick)).toEqual(withoutIds(slow));
  });

  it('every command of the core is one oclif knows, and no core command loads zod', () => {
    const core = readdirSync(BUNDLE).find((f) => /^core-[0-9a-f]{16}\.cjs$/.test(f));
    expect(core).toBeDefined();
    const text = readFileSync(join(BUNDLE, core!), 'latin1');
    expect(text).not.toMatch(/\/\/ node_modules\/zod\//);
    expect(text).toMatch(/"whoami": \(\) =>/);
    expect(text).toMatch(/"agents:list": \(\) =>/);
    // ASCII only: the loader reads it as latin1.
    expect([...readFileSync(join(BUNDLE, core!))].every((b) => b < 0x80)).toBe(true);
  });
});

describe("the core's code cache", () => {
  const cli = cliSandbox();
  const cacheHome = mkdtempSync(join(tmpdir(), 'platform-cache-'));
  const v8Dir = join(cacheHome, 'platform', 'v8');
  const version = () => cli.run(['--help'], { env: { XDG_CACHE_HOME: cacheHome } });
  afterAll(() => {
    rmSync(cacheHome, { recursive: true, force: true });
    return cli.stop();
  });

  it('is written once to a private directory, and a cache that does not fit or is damaged is replaced, not trusted', async () => {
    expect((await cli.run(['--help'], { env: { XDG_CACHE_HOME: cacheHome, PLATFORM_NO_CODE_CACHE: '1' } })).exitCode).toBe(0);
    expect(() => readdirSync(v8Dir)).toThrow();

    const first = await version();
    expect(first.exitCode, first.stderr).toBe(0);
    const file = join(v8Dir, 'cli-core.cache');
    expect(readdirSync(v8Dir)).toEqual(['cli-core.cache']);
    expect(statSync(v8Dir).mode & 0o777).toBe(0o700);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const written = readFileSync(file);
    const headerLength = written.indexOf(` ${process.arch} `) + process.arch.length + 2;
    expect(written.toString('latin1', 0, 100)).toMatch(/^platform code cache 1 cli [0-9a-f]{64} /);

    // An accepted cache is read, not written again.
    const { mtimeMs, ino } = statSync(file);
    expect((await version()).stdout).toBe(first.stdout);
    expect(statSync(file)).toMatchObject({ mtimeMs, ino });

    // Another build's or node's cache (its header differs), and a damaged one whose header still
    // matches (V8 would take it and could crash): the command runs as usual, and the cache is
    // written anew.
    const damaged = Buffer.from(written);
    damaged[damaged.length - 100] ^= 0xff;
    for (const bad of [Buffer.alloc(4096, 7), Buffer.concat([Buffer.from('platform code cache 1 cli 0000 '), written.subarray(40)]), damaged]) {
      writeFileSync(file, bad);
      const again = await version();
      expect({ exit: again.exitCode, out: again.stdout, err: again.stderr }).toEqual({ exit: 0, out: first.stdout, err: '' });
      expect(readFileSync(file).equals(bad)).toBe(false);
      expect(readFileSync(file).subarray(0, headerLength).equals(written.subarray(0, headerLength))).toBe(true);
    }
    expect(readdirSync(v8Dir)).toEqual(['cli-core.cache']);
  });

  it('is not needed: an unwritable cache directory changes nothing', async () => {
    const blocked = join(cacheHome, 'blocked');
    writeFileSync(blocked, 'a file where the directory would be');
    const r = await execa('node', [join(ROOT, 'bin', 'run.js'), '--help'], { env: { ...cli.env, XDG_CACHE_HOME: blocked }, reject: false });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
  });
});
