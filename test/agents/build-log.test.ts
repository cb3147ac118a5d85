import { describe, expect, it } from 'vitest';
import { BuildLog } from '../../src/daemon/runtime/build-log.js';
import { buildCause, buildMessage } from '../../src/daemon/services/agents/view.js';

describe('BuildLog', () => {
  it('keeps the last characters of a runaway build, counts what it dropped, and appends in linear time', () => {
    const log = new BuildLog(1024 * 1024);
    const chunk = `${'y'.repeat(1023)}\n`;
    const t0 = performance.now();
    for (let i = 0; i < 64 * 1024; i++) log.append(chunk); // 64 MiB without a pause
    const ms = performance.now() - t0;
    console.log(`64 MiB of build output appended in ${ms.toFixed(0)} ms`);
    expect(ms).toBeLessThan(5000);
    const text = log.text();
    const [head, ...rest] = text.split('\n');
    expect(head).toBe(`[${64 * 1024 * 1024 - 1024 * 1024} earlier characters of build output were dropped: the last 1048576 are kept]`);
    expect(rest.join('\n').length).toBe(1024 * 1024);
  });

  it('streams later chunks to followers until it ends, then ends late followers at once', () => {
    const log = new BuildLog();
    log.append('one\n');
    const seen: string[] = [];
    let ended = 0;
    log.follow((c) => seen.push(c), () => ended++);
    log.append('two\n');
    log.end();
    log.append('after the end\n');
    expect(seen).toEqual(['two\n']);
    expect(ended).toBe(1);
    log.follow(() => seen.push('late'), () => ended++);
    expect(ended).toBe(2);
    expect(log.text()).toBe('one\ntwo\n');
  });
});

describe('build failure messages', () => {
  it("names the compiler's line, not the platform's step line", () => {
    const out = 'build x for f (function/go) on the process driver\n$ go build -o .platform/function .\n# function\n./main.go:6:2: syntax error: unexpected }\nbuild step exited with code 1\n';
    expect(buildCause(out)).toBe('./main.go:6:2: syntax error: unexpected }');
  });

  it('keeps the last 4000 characters after a marker, cut at a line start', () => {
    const out = Array.from({ length: 400 }, (_, i) => `line ${i} ${'z'.repeat(20)}`).join('\n');
    const msg = buildMessage('fn', 'revision fn-00001 failed to build: line 399', out);
    const [headline, marker, first] = msg.split('\n');
    expect(headline).toBe('revision fn-00001 failed to build: line 399');
    expect(marker).toMatch(/^\[build output truncated: \d+ earlier characters; the whole log: platform logs fn --build\]$/);
    expect(first).toMatch(/^line \d+ z{20}$/);
    expect(msg.endsWith(`line 399 ${'z'.repeat(20)}`)).toBe(true);
    expect(msg.length - headline!.length - marker!.length - 2).toBeLessThanOrEqual(4000);
  });
});
