import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ApiCallError, UsageError } from '../../src/client/errors.js';
import { contentText, explain, parseCallArgs, publishBody, readFolder, toolNameOf, unchanged } from '../../src/client/mcp.js';
import type { McpTool } from '../../src/api/mcp.js';

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

  it('count a tool unchanged only when source, keys and any explicit description or schema match', () => {
    const current: McpTool = {
      name: 'a', description: 'derived', handler: 'src', schema: { type: 'object' }, credential_keys: ['k', 'j'], credentialKeys: ['k', 'j'], updated_at: '2026-01-01T00:00:00Z',
    };
    expect(unchanged(undefined, { handler: 'src' })).toBe(false);
    expect(unchanged(current, { handler: 'src', credential_keys: ['j', 'k'] })).toBe(true);
    expect(unchanged(current, { handler: 'src2', credential_keys: ['j', 'k'] })).toBe(false);
    expect(unchanged(current, { handler: 'src' })).toBe(false);
    expect(unchanged(current, { handler: 'src', credential_keys: ['j', 'k'], description: 'other' })).toBe(false);
    expect(unchanged(current, { handler: 'src', credential_keys: ['j', 'k'], schema: { type: 'object' } })).toBe(true);
    expect(unchanged(current, { handler: 'src', credential_keys: ['j', 'k'], schema: { type: 'object', properties: {} } })).toBe(false);
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
