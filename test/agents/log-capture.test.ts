import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { LogLine } from '../../src/api/agents.js';
import { LogCapture, type CaptureLimits } from '../../src/daemon/runtime/log-capture.js';

/** A capture on a real stream, with the sink's answers under the test's control. */
function capture(limits: Partial<CaptureLimits> = {}, accept: (l: LogLine) => boolean = () => true) {
  const sunk: LogLine[] = [];
  const cap = new LogCapture('inst-1', 'rev-1', (l, force) => {
    if (!force && !accept(l)) return false;
    sunk.push(l);
    return true;
  }, limits);
  const stream = new PassThrough();
  cap.attach(stream, 'stdout');
  /** Writes chunks and waits until the capture has read them all. */
  const write = async (...chunks: (string | Buffer)[]) => {
    for (const c of chunks) stream.write(c);
    while (stream.readableLength > 0 || stream.writableLength > 0) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setImmediate(r));
  };
  const end = async () => {
    stream.end();
    await once(stream, 'end');
  };
  return { cap, sunk, write, end, messages: () => sunk.map((l) => l.message) };
}

describe('log capture (issue 16 §2)', () => {
  it('splits lines across chunks, strips CR, keeps empty lines and flushes the last line at the end', async () => {
    const c = capture();
    await c.write('one\r\ntw', 'o\n\nthr', 'ee');
    expect(c.messages()).toEqual(['one', 'two', '']);
    await c.end();
    expect(c.messages()).toEqual(['one', 'two', '', 'three']);
    expect(c.sunk.every((l) => l.instance === 'inst-1' && l.revision === 'rev-1' && l.stream === 'stdout')).toBe(true);
  });

  it('cuts a line past the cap at once, marks it, drops the rest of it and goes on with the next line', async () => {
    const c = capture({ maxLineBytes: 16 });
    await c.write('abcdefghij', 'klmnopqrstuvwxyz0123', '456789\nnext\n');
    expect(c.messages()).toEqual(['abcdefghijklmnop … [truncated: line longer than 16 bytes, the rest of it was dropped]', 'next']);
  });

  it('never cuts inside a UTF-8 character', async () => {
    const c = capture({ maxLineBytes: 5 });
    // "aé€" is 1 + 2 + 3 bytes: 5 bytes end inside the euro sign, which is left out whole.
    await c.write(Buffer.from('aé€ tail\n'));
    expect(c.messages()[0]).toMatch(/^aé … \[truncated/);
  });

  it('a line exactly at the cap is kept whole', async () => {
    const c = capture({ maxLineBytes: 4 });
    await c.write('abcd\n');
    expect(c.messages()).toEqual(['abcd']);
  });

  it('drops lines over the instance rate and writes how many, once the window closes', async () => {
    const c = capture({ windowMs: 200, windowLines: 3 });
    await c.write(Array.from({ length: 10 }, (_, i) => `l${i}\n`).join(''));
    expect(c.messages()).toEqual(['l0', 'l1', 'l2']);
    await new Promise((r) => setTimeout(r, 300));
    expect(c.messages().at(-1)).toBe("7 lines dropped from instance inst-1 (over the instance's log rate of 3 lines or 1 MiB per 0.2 s)");
    expect(c.sunk.at(-1)!.stream).toBe('system');
    await c.write('after\n');
    expect(c.messages().at(-1)).toBe('after');
  });

  it('counts lines the store refuses and says so before the next line it takes', async () => {
    let open = false;
    const c = capture({}, () => open);
    await c.write('a\nb\n');
    expect(c.sunk).toEqual([]);
    open = true;
    await c.write('c\n');
    expect(c.messages()).toEqual(['2 lines dropped from instance inst-1 (while the log store was behind)', 'c']);
  });

  it('reports drops left at the end when the instance stops, and system lines always go through', async () => {
    const c = capture({ windowMs: 60_000, windowLines: 1 });
    await c.write('x\ny\nz\n');
    c.cap.push('system', 'instance inst-1 stopping');
    expect(c.messages()).toEqual(['x', "2 lines dropped from instance inst-1 (over the instance's log rate of 1 lines or 1 MiB per 60 s)", 'instance inst-1 stopping']);
    await c.write('w\n');
    c.cap.close();
    expect(c.messages().at(-1)).toMatch(/^1 line dropped/);
  });

  it('bounds the live ring by lines and by characters', async () => {
    const c = capture({ keepLines: 3, keepChars: 9 });
    await c.write('1\n2\n3\n4\n');
    expect(c.cap.lines().map((l) => l.message)).toEqual(['2', '3', '4']);
    await c.write('abcdefgh\n');
    expect(c.cap.lines().map((l) => l.message)).toEqual(['4', 'abcdefgh']);
  });

  it('splits a 24 MiB line and 2 MiB of short lines in linear time', async () => {
    const c = capture({ windowLines: 1_000_000, windowBytes: 1024 ** 3 });
    const block = Buffer.from('0123456789abcde\n'.repeat(4096)); // 64 KiB, 4096 lines
    const long = Buffer.alloc(64 * 1024, 120);
    const cpu0 = process.cpuUsage();
    await c.write(...Array<Buffer>(384).fill(long), '\n');
    const cpu = process.cpuUsage(cpu0);
    // Re-splitting the growing partial line with each chunk copied gigabytes here (seconds of CPU).
    expect((cpu.user + cpu.system) / 1000).toBeLessThan(1500);
    await c.write(...Array<Buffer>(32).fill(block));
    expect(c.sunk).toHaveLength(1 + 32 * 4096);
    expect(c.sunk[0]!.message).toMatch(/^x{16384} … \[truncated/);
  });
});
