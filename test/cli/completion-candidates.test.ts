import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { complete, Directive, formatCompletion, type NameLookup, type Scope } from '../../src/cli/completion/candidates.js';
import { commandTree } from '../../src/cli/completion/main.js';
import { NameCache } from '../../src/cli/completion/name-cache.js';
import type { ResourceKind } from '../../src/cli/completion/resources.js';

/** The real command tree (the built manifest), so a renamed argument shows here. */
const tree = commandTree(join(import.meta.dirname, '..', '..'));

/** Names by kind (and topic, for subscriptions); records every look-up with its scope. */
function names(byKind: Partial<Record<string, string[]>>) {
  const calls: { kind: ResourceKind; scope: Scope }[] = [];
  const lookup: NameLookup = async (kind, scope) => {
    calls.push({ kind, scope });
    return byKind[scope.topic ? `${kind}:${scope.topic}` : kind] ?? [];
  };
  return { calls, lookup };
}

const values = async (words: string[], lookup: NameLookup = names({}).lookup) => (await complete(words, tree, lookup)).candidates.map((c) => c.value);

describe('completion candidates', () => {
  it('commands and topics at the root and under a topic, with their descriptions', async () => {
    expect(await values(['ag'])).toEqual(['agents']);
    const described = await complete(['mc'], tree, names({}).lookup);
    expect(described.candidates).toEqual([{ value: 'mcp', description: expect.stringMatching(/^MCP servers/) }]);
    expect(await values(['agents', ''])).toEqual(expect.arrayContaining(['get', 'list', 'delete', 'env', 'files', 'secrets']));
    expect(await values(['mcp', 'tools', 'p'])).toEqual(['publish']);
    expect(await values(['gateway', 'endpoints', 'cr'])).toEqual(['create']);
    // Hidden commands are never offered, nor unknown paths.
    expect(await values(['nope', ''])).toEqual([]);
  });

  it('the NAME of a command is a resource name of the right kind, filtered by what is typed', async () => {
    const n = names({ agent: ['hello', 'helper', 'other'], topic: ['orders'], index: ['docs'], 'mcp-server': ['tools'], service: ['web'], cache: ['sessions'], trigger: ['nightly'] });
    expect(await values(['agents', 'get', 'hel'], n.lookup)).toEqual(['hello', 'helper']);
    expect(await values(['invoke', ''], n.lookup)).toEqual(['hello', 'helper', 'other']);
    expect(await values(['logs', ''], n.lookup)).toEqual(['hello', 'helper', 'other']);
    expect(await values(['env', 'get', ''], n.lookup)).toEqual(['hello', 'helper', 'other']);
    expect(await values(['memory', 'list', ''], n.lookup)).toEqual(['hello', 'helper', 'other']);
    expect(await values(['topics', 'get', ''], n.lookup)).toEqual(['orders']);
    expect(await values(['publish', ''], n.lookup)).toEqual(['orders']);
    expect(await values(['indexes', 'query', ''], n.lookup)).toEqual(['docs']);
    expect(await values(['mcp', 'get', ''], n.lookup)).toEqual(['tools']);
    expect(await values(['mcp', 'tools', 'list', ''], n.lookup)).toEqual(['tools']);
    expect(await values(['services', 'get', ''], n.lookup)).toEqual(['web']);
    expect(await values(['cache', 'stats', ''], n.lookup)).toEqual(['sessions']);
    expect(await values(['triggers', 'fire', ''], n.lookup)).toEqual(['nightly']);
  });

  it('a new name (create) and free text are not completed; a second NAME-less position neither', async () => {
    const n = names({ agent: ['hello'], topic: ['orders'] });
    expect(await values(['topics', 'create', ''], n.lookup)).toEqual([]);
    expect(await values(['memory', 'add', 'hello', ''], n.lookup)).toEqual([]);
    expect(await values(['agents', 'get', 'hello', ''], n.lookup)).toEqual([]);
    expect(n.calls.map((c) => c.kind)).toEqual([]);
  });

  it('paths fall back to file names; resources and flags do not', async () => {
    expect((await complete(['deploy', ''], tree, names({}).lookup)).directive).toBe(Directive.files);
    expect((await complete(['objects', 'put', 'b', ''], tree, names({}).lookup)).directive).toBe(Directive.files);
    expect((await complete(['indexes', 'upsert', 'docs', '--file', ''], tree, names({}).lookup)).directive).toBe(Directive.files);
    expect((await complete(['agents', 'get', ''], tree, names({}).lookup)).directive).toBe(0);
  });

  it('flags of the command, not those already given (repeatable ones stay)', async () => {
    expect(await values(['agents', 'get', 'hello', '--'])).toEqual(['--json', '--context', '--timeout', '--project', '--help']);
    expect(await values(['agents', 'get', '--project', 'x', '--p'])).toEqual([]);
    expect(await values(['invoke', 'hello', '--data', '{}', '--d'])).toEqual([]);
    expect(await values(['services', 'update', 'web', '--env', 'A=1', '--e'])).toEqual(['--env']);
  });

  it('flag values: option lists, projects, contexts and topics; --project and --context pick where names come from', async () => {
    const n = names({ project: ['default', 'shop'], context: ['local', 'team'], topic: ['orders'], agent: ['hello'] });
    expect(await values(['init', '--template', 'agent-'], n.lookup)).toEqual(['agent-langgraph', 'agent-adk', 'agent-crewai']);
    expect(await values(['init', '-t', 'mcp'], n.lookup)).toEqual(['mcp-python']);
    expect(await values(['completion', ''], n.lookup)).toEqual(['bash', 'zsh', 'fish']);
    expect(await values(['agents', 'list', '--project', ''], n.lookup)).toEqual(['default', 'shop']);
    expect(await values(['agents', 'list', '--context', 't'], n.lookup)).toEqual(['team']);
    expect(await values(['pull', 'sub', '--topic', ''], n.lookup)).toEqual(['orders']);
    await values(['agents', 'get', '--project', 'shop', '--context=team', ''], n.lookup);
    expect(n.calls.at(-1)).toEqual({ kind: 'agent', scope: { project: 'shop', context: 'team' } });
    // A flag value is not counted as the NAME.
    expect(await values(['agents', 'get', '--project', 'shop', 'he'], n.lookup)).toEqual(['hello']);
  });

  it('--flag=value: whole (zsh, fish) and as bash splits it at the =', async () => {
    const n = names({ project: ['default', 'shop'], agent: ['hello'] });
    expect(await values(['agents', 'list', '--project=s'], n.lookup)).toEqual(['--project=shop']);
    expect(await values(['init', '--template=function-'], n.lookup)).toEqual(['--template=function-python', '--template=function-nodejs', '--template=function-go', '--template=function-ruby']);
    expect(await values(['agents', 'get', '--json=x'], n.lookup)).toEqual([]);
    // A path after `--file=` is left alone: the shell's file names would not start at the `=`.
    expect((await complete(['indexes', 'upsert', 'docs', '--file=./'], tree, n.lookup)).directive & Directive.files).toBe(0);
    // bash: `--project` `=` `s`, and a lone `=` under the cursor, which bash replaces whole.
    expect(await values(['agents', 'list', '--project', '=', 's'], n.lookup)).toEqual(['shop']);
    expect(await values(['agents', 'list', '--project', '='], n.lookup)).toEqual(['=default', '=shop']);
    expect((await complete(['indexes', 'upsert', 'docs', '--file', '=', ''], tree, n.lookup)).directive).toBe(Directive.files);
    // A value given as `--project = shop` scopes the names and is not the NAME.
    expect(await values(['agents', 'get', '--project', '=', 'shop', 'he'], n.lookup)).toEqual(['hello']);
    expect(n.calls.at(-1)).toEqual({ kind: 'agent', scope: { project: 'shop' } });
  });

  it('subscriptions: under the topic typed before, or TOPIC/ then TOPIC/SUB for pull and ack', async () => {
    const n = names({ topic: ['orders', 'audit'], 'subscription:orders': ['billing', 'mail'] });
    expect(await values(['subscriptions', 'get', 'orders', ''], n.lookup)).toEqual(['billing', 'mail']);
    expect(await values(['subscriptions', 'get', ''], n.lookup)).toEqual(['orders', 'audit']);
    const topics = await complete(['pull', 'o'], tree, n.lookup);
    expect(topics).toEqual({ candidates: [{ value: 'orders/' }], directive: Directive.noSpace });
    expect(await values(['pull', 'orders/m'], n.lookup)).toEqual(['orders/mail']);
    expect(await values(['ack', '--topic', 'orders', ''], n.lookup)).toEqual(['billing', 'mail']);
  });

  it('the wire format: value<TAB>first line of the description, then the directive', () => {
    expect(formatCompletion({ candidates: [{ value: 'get', description: 'Show one\nmore' }, { value: 'hello' }], directive: 1 })).toBe('get\tShow one\nhello\n:1\n');
  });
});

describe('the name cache', () => {
  const dir = mkdtempSync(join(tmpdir(), 'completion-cache-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('answers within the TTL, per context and project, and forgets after it', () => {
    let now = 1_000_000;
    const cache = new NameCache(dir, () => now, 20_000);
    cache.set('local', 'default', 'agent', ['hello']);
    cache.set('local', 'shop', 'agent', ['cart']);
    cache.set('team', 'default', 'agent', ['remote']);
    expect(cache.get('local', 'default', 'agent')).toEqual(['hello']);
    expect(cache.get('local', 'shop', 'agent')).toEqual(['cart']);
    expect(cache.get('team', 'default', 'agent')).toEqual(['remote']);
    expect(cache.get('local', 'default', 'topic')).toBeUndefined();
    now += 19_999;
    expect(cache.get('local', 'default', 'agent')).toEqual(['hello']);
    now += 1;
    expect(cache.get('local', 'default', 'agent')).toBeUndefined();
    // A clock set back (an entry from the future) is not trusted either.
    now -= 60_000;
    expect(cache.get('local', 'default', 'agent')).toBeUndefined();
  });

  it('a write drops the expired entries of its file', async () => {
    let now = 0;
    const cache = new NameCache(dir, () => now, 1_000);
    cache.set('local', 'p', 'topic', ['a']);
    now = 5_000;
    cache.set('local', 'p', 'agent', ['b']);
    const { readFileSync } = await import('node:fs');
    expect(Object.keys(JSON.parse(readFileSync(join(dir, 'local~p.json'), 'utf8')))).toEqual(['agent']);
  });
});
