import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ApiCallError, UsageError } from '../../src/client/errors.js';
import { argSchemas, coerceArg, contentText, explain, parseCallArgs, publishBody, publishFolder, readFolder, toolNameOf, type FolderTool } from '../../src/client/mcp.js';
import type { ApiClient } from '../../src/client/api-client.js';

/** The CLI's pure pieces of `platform mcp`: argument parsing, folder reading, change detection, error advice. */
const dir = mkdtempSync(join(tmpdir(), 'mcp-cli-units-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const usage = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(UsageError);
    return e as UsageError;
  }
  throw new Error('expected a usage error');
};

describe('call arguments', () => {
  it('parse each value as JSON when it parses, else as text; --arg wins over --args', () => {
    expect(parseCallArgs(['n=3', 'f=1.5', 'ok=true', 'none=null', 'city=Paris', 'list=[1,"a"]', 'obj={"k":1}', 'q="007"', 'zip=01234', 'eq=a=b', 'empty='])).toEqual({
      n: 3,
      f: 1.5,
      ok: true,
      none: null,
      city: 'Paris',
      list: [1, 'a'],
      obj: { k: 1 },
      q: '007',
      zip: '01234',
      eq: 'a=b',
      empty: '',
    });
    expect(parseCallArgs(['a=2'], '{"a": 1, "b": "x"}')).toEqual({ a: 2, b: 'x' });
    expect(parseCallArgs([], undefined)).toEqual({});
  });

  it('read each --arg as its parameter\'s schema types it: strings as they are, numbers and booleans parsed, JSON for lists and objects', () => {
    const schema = {
      type: 'object',
      properties: {
        zip: { type: 'string' },
        n: { type: 'integer' },
        x: { type: 'number' },
        ok: { type: 'boolean' },
        tags: { type: 'array', items: { type: 'string' } },
        opts: { type: 'object' },
        maybe: { anyOf: [{ type: 'integer' }, { type: 'null' }] },
        label: { anyOf: [{ type: 'string' }, { type: 'null' }] },
        mode: { enum: ['fast', 'slow'], type: 'string' },
        level: { enum: [1, 2, 'max'] },
        both: { type: ['integer', 'boolean'] },
        anything: {},
      },
    };
    const props = argSchemas(schema);
    const args = parseCallArgs(
      ['zip=01234', 'n=123', 'x=2.5', 'ok=TRUE', 'tags=["a","b"]', 'opts={"k":1}', 'maybe=null', 'label=null', 'mode=fast', 'level=2', 'both=false', 'anything=[1]', 'extra=7', 'quoted="7"'],
      '{"zip": 1, "kept": "x"}',
      props,
    );
    expect(args).toEqual({ zip: '01234', n: 123, x: 2.5, ok: true, tags: ['a', 'b'], opts: { k: 1 }, maybe: null, label: 'null', mode: 'fast', level: 2, both: false, anything: [1], extra: 7, quoted: '7', kept: 'x' });
    expect(parseCallArgs(['zip=123', 'n=1e3', 'x=-0.5', 'maybe=4', 'level=max'], undefined, props)).toEqual({ zip: '123', n: 1000, x: -0.5, maybe: 4, level: 'max' });
    // A string parameter keeps quotes and JSON-looking text: what was typed is what is sent.
    expect(coerceArg('zip', '"007"', { type: 'string' })).toBe('"007"');
    expect(coerceArg('zip', '[1]', { type: 'string' })).toBe('[1]');
    expect(argSchemas({ type: 'object' })).toBeUndefined();
  });

  it('stop with a usage error (exit 2) naming the parameter and the type when a value does not parse', () => {
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ['n=abc', { n: { type: 'integer' } }, /^--arg n: expected an integer, got "abc"$/],
      ['n=2.5', { n: { type: 'integer' } }, /expected an integer, got "2.5"/],
      ['n=0x10', { n: { type: 'integer' } }, /expected an integer/],
      ['n=', { n: { type: 'integer' } }, /expected an integer, got ""/],
      ['x=1,5', { x: { type: 'number' } }, /^--arg x: expected a number/],
      ['ok=yes', { ok: { type: 'boolean' } }, /^--arg ok: expected true or false, got "yes"$/],
      ['tags=a,b', { tags: { type: 'array' } }, /^--arg tags: expected a JSON array/],
      ['tags={"a":1}', { tags: { type: 'array' } }, /expected a JSON array/],
      ['opts=[1]', { opts: { type: 'object' } }, /^--arg opts: expected a JSON object/],
      ['maybe=many', { maybe: { anyOf: [{ type: 'integer' }, { type: 'null' }] } }, /^--arg maybe: expected null or an integer, got "many"$/],
    ];
    for (const [pair, props, message] of cases) {
      const e = usage(() => parseCallArgs([pair], undefined, props as Record<string, Record<string, unknown>>));
      expect(e.message, pair).toMatch(message);
      expect(e.exitCode, pair).toBe(2);
      expect(e.next, pair).toMatch(/^e\.g\. --arg /);
    }
  });

  it('refuse a pair without a key and --args that is not a JSON object', () => {
    expect(usage(() => parseCallArgs(['novalue'])).message).toMatch(/--arg novalue is not KEY=VALUE/);
    expect(usage(() => parseCallArgs(['=1'])).message).toMatch(/not KEY=VALUE/);
    expect(usage(() => parseCallArgs([], '[1]')).message).toMatch(/--args must be a JSON object/);
    expect(usage(() => parseCallArgs([], '{oops')).message).toMatch(/--args is not valid JSON/);
  });
});

describe('tool files', () => {
  it('name a tool after the file stem unless --name, and refuse names the API would', () => {
    expect(toolNameOf('/x/get_weather.py')).toBe('get_weather');
    expect(toolNameOf('/x/My-Tool.py', 'my_tool')).toBe('my_tool');
    const e = usage(() => toolNameOf('/x/my-tool.py'));
    expect(e.message).toMatch(/"my-tool" is not a valid tool name/);
    expect(e.next).toMatch(/--name/);
  });

  it('read a module into a publish body, refusing empty and oversized ones', () => {
    const f = join(dir, 'add.py');
    writeFileSync(f, 'from platform_mcp import tool\n\n@tool\ndef add(a: int, b: int) -> int:\n    return a + b\n');
    expect(publishBody(f, { credential_keys: ['k1'], description: 'adds' })).toEqual({ handler: expect.stringContaining('def add'), credential_keys: ['k1'], description: 'adds' });
    expect(publishBody(f, { credential_keys: [] })).toEqual({ handler: expect.any(String) });
    writeFileSync(join(dir, 'empty.py'), '\n');
    expect(usage(() => publishBody(join(dir, 'empty.py'))).message).toMatch(/is empty/);
    writeFileSync(join(dir, 'big.py'), '#'.repeat(1024 * 1024 + 1));
    expect(usage(() => publishBody(join(dir, 'big.py'))).message).toMatch(/must fit in 1 MiB/);
    expect(usage(() => publishBody(join(dir, 'absent.py'))).message).toMatch(/cannot read .*absent.py: no such file/);
  });

  it('read a folder: every *.py by name, _ files skipped, mcp.json settings applied, bad names refused before anything is sent', () => {
    const d = join(dir, 'folder');
    mkdirSync(d);
    writeFileSync(join(d, 'b_tool.py'), '@tool\ndef b(): return 1\n');
    writeFileSync(join(d, 'a_tool.py'), '@tool\ndef a(): return 1\n');
    writeFileSync(join(d, '__init__.py'), '');
    writeFileSync(join(d, 'README.md'), 'not a tool');
    writeFileSync(join(d, 'mcp.json'), JSON.stringify({ tools: { b_tool: { description: 'B', credentialKeys: ['api-key'] } } }));
    const { tools, skipped } = readFolder(d);
    expect(tools.map((t) => t.name)).toEqual(['a_tool', 'b_tool']);
    expect(tools[1]!.body).toMatchObject({ description: 'B', credential_keys: ['api-key'] });
    expect(tools[0]!.body).toEqual({ handler: '@tool\ndef a(): return 1\n' });
    expect(skipped).toEqual(['__init__.py']);
    writeFileSync(join(d, 'Bad-Name.py'), '@tool\ndef c(): return 1\n');
    expect(usage(() => readFolder(d)).message).toMatch(/not a tool name: Bad-Name.py/);
    rmSync(join(d, 'Bad-Name.py'));
    writeFileSync(join(d, 'mcp.json'), JSON.stringify({ tools: { ghost: {} } }));
    expect(usage(() => readFolder(d)).message).toMatch(/no module in the folder: ghost/);
    const empty = join(dir, 'empty-folder');
    mkdirSync(empty);
    expect(usage(() => readFolder(empty)).message).toMatch(/no tool modules/);
  });

  it('refuse a folder one publish cannot take, before any request', async () => {
    const client = {} as ApiClient;
    const ref = { projectID: 'p', server: 's' };
    const many: FolderTool[] = Array.from({ length: 65 }, (_, i) => ({ name: `t${i}`, file: `t${i}.py`, body: { handler: '@tool\ndef f(): return 1\n' } }));
    await expect(publishFolder(client, ref, many, false)).rejects.toThrow(/65 tool modules; one publish takes at most 64/);
    const big: FolderTool[] = Array.from({ length: 9 }, (_, i) => ({ name: `t${i}`, file: `t${i}.py`, body: { handler: '#'.repeat(1000 * 1000) } }));
    await expect(publishFolder(client, ref, big, true)).rejects.toBeInstanceOf(UsageError);
    await expect(publishFolder(client, ref, big, true)).rejects.toThrow(/at most 8 MiB/);
  });
});

describe('results and errors', () => {
  it('show text content as it is and other kinds as one line', () => {
    expect(contentText({ content: [{ type: 'text', text: 'hello' }, { type: 'text', text: 'world' }] })).toBe('hello\nworld');
    expect(contentText({ content: [{ type: 'image', mimeType: 'image/png', data: 'AAAA' }] })).toBe('[image image/png, 3 bytes]');
    expect(contentText({ content: [], structuredContent: { a: 1 } })).toBe('{\n  "a": 1\n}');
  });

  it('add the next step to the MCP failures, keeping status, message and request id', () => {
    const next = (status: number, message: string, ref: Parameters<typeof explain>[1]) => {
      try {
        explain(new ApiCallError(status, message, 'req-1'), ref);
      } catch (e) {
        expect(e).toBeInstanceOf(ApiCallError);
        expect((e as ApiCallError).status).toBe(status);
        expect((e as ApiCallError).message).toBe(message);
        expect((e as ApiCallError).requestId).toBe('req-1');
        return (e as ApiCallError).next;
      }
    };
    expect(next(404, 'mcp server not found', { server: 'w' })).toMatch(/platform mcp list/);
    expect(next(404, 'tool not found', { server: 'w', tool: 't' })).toMatch(/platform mcp tools list w/);
    expect(next(404, 'version not found', { server: 'w', version: '9' })).toMatch(/platform mcp versions w/);
    expect(next(409, 'version 2 is yanked', { server: 'w', version: '2' })).toMatch(/platform mcp unyank w 2/);
    expect(next(409, 'version 3 has no recorded image', { server: 'w', version: '3' })).toMatch(/never built/);
    expect(next(409, 'cannot yank the version currently running', { server: 'w', version: '4' })).toMatch(/platform mcp rollback w VERSION/);
    expect(next(403, 'forbidden', { server: 'w' })).toMatch(/project admin/);
    expect(() => explain(new Error('boom'), {})).toThrow('boom');
  });
});
