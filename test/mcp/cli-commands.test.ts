import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { execa } from 'execa';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliSandbox, type CliResult } from '../helpers/cli.js';
import { randomPortWindow } from '../secrets/agent-fixture.js';

/**
 * `platform mcp ...` with the built CLI against the daemon it spawns (process driver, project
 * `default`): servers, publishing with --wait, versions and their 409s, calling tools, --json.
 */
const ports = randomPortWindow();
const cli = cliSandbox({ PLATFORM_WORKLOAD_PORT_MIN: String(ports.portMin), PLATFORM_WORKLOAD_PORT_MAX: String(ports.portMax) });
const src = join(cli.home, 'src');

const ADD = `from platform_mcp import tool


@tool
def add(a: int, b: int = 1) -> int:
    """Adds two numbers.

    Args:
        a: the first number
        b: the second number
    """
    return a + b
`;
const FAILS = `from platform_mcp import tool


@tool
def fails(reason: str) -> str:
    """Always raises."""
    raise ValueError(f"refused: {reason}")
`;
const ECHO = `from platform_mcp import tool


@tool
def echo(value: object = None, text: str = "") -> str:
    """Echoes what it got, with its Python type."""
    import json
    return json.dumps({"value": value, "type": type(value).__name__, "text": text})
`;
const BROKEN = `from platform_mcp import tool

@tool
def broken(:
    return 1
`;

const ok = (r: CliResult) => expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
/** Errors say what to do next and never show the API's paths. */
const fails = (r: CliResult, code = 1) => {
  expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(code);
  expect(r.stderr + r.stdout).not.toMatch(/\/v1\//);
};

beforeAll(async () => {
  mkdirSync(src, { recursive: true });
  for (const [name, text] of Object.entries({ 'add.py': ADD, 'fails.py': FAILS, 'echo.py': ECHO, 'broken.py': BROKEN })) writeFileSync(join(src, name), text);
  writeFileSync(join(src, 'schema.json'), JSON.stringify({ type: 'object', properties: { value: {}, text: { type: 'string' } } }));
  ok(await cli.run(['daemon', 'start', '--json']));
}, 60_000);
afterAll(() => cli.stop());

// Each step runs the built CLI as its own process (a second or more on a loaded machine).
describe('platform mcp', { timeout: 180_000 }, () => {
  it('create, list and get a server; a taken or invalid name fails with the next step', async () => {
    const created = await cli.run(['mcp', 'create', 'calc', '--json']);
    ok(created);
    expect(created.json.mcp_server).toMatchObject({ name: 'calc', state: 'pending', ready: false, expose: '', visibility: '', tool_names: [], tool_count: 0 });
    const [exposed, again, invalid] = await Promise.all([
      cli.run(['mcp', 'create', 'public-calc', '--expose', 'apps']),
      cli.run(['mcp', 'create', 'calc']),
      cli.run(['mcp', 'create', 'Bad_Name', '--json']),
    ]);
    ok(exposed);
    expect(exposed.stdout).toMatch(/^name\s+public-calc$/m);
    expect(exposed.stdout).toMatch(/^expose\s+apps$/m);
    expect(exposed.stderr).toMatch(/next: .*platform mcp publish public-calc/);
    fails(again);
    expect(again.stderr).toMatch(/^Error: .+/);
    expect(again.stderr).toMatch(/next: choose another name, or look at it with `platform mcp get calc`/);
    fails(invalid);
    expect(invalid.json).toMatchObject({ status: 400 });
    const [list, listJson, get, missing] = await Promise.all([
      cli.run(['mcp', 'list']),
      cli.run(['mcp', 'list', '--json']),
      cli.run(['mcp', 'get', 'calc']),
      cli.run(['mcp', 'get', 'nope']),
    ]);
    ok(list);
    expect(list.stdout).toMatch(/^NAME\s+STATE\s+VERSION\s+TOOLS\s+EXPOSE\s+URL$/m);
    expect(list.stdout).toMatch(/^calc\s+pending\s+-\s+0\s+private\s+-$/m);
    expect(list.stdout).toMatch(/^public-calc\s+pending\s+-\s+0\s+apps/m);
    expect(listJson.json.mcpservers.map((s: { name: string }) => s.name).sort()).toEqual(['calc', 'public-calc']);
    ok(get);
    expect(get.stdout).toMatch(/^state\s+pending$/m);
    expect(get.stdout).toMatch(/^expose\s+private \(reachable only inside the platform\)$/m);
    expect(get.stderr).toMatch(/nothing to serve yet: publish a tool with `platform mcp tools publish calc FILE.py --wait`/);
    fails(missing);
    expect(missing.stderr).toMatch(/next: list the servers with `platform mcp list`/);
  });

  it('tools publish --wait ends ready; tools list shows names, descriptions and keys, --json the schemas', async () => {
    const first = await cli.run(['mcp', 'tools', 'publish', 'calc', join(src, 'add.py'), '--wait', '--json']);
    ok(first);
    expect(first.json).toMatchObject({ server: 'calc', name: 'add', version: 1, mcp_server: { name: 'calc', state: 'ready', ready: true, version: 1, tool_names: ['add'] } });
    expect(first.json.build_id).toEqual(expect.any(String));
    const second = await cli.run(['mcp', 'tools', 'publish', 'calc', join(src, 'fails.py'), '--credential-key', 'calc-token', '--wait']);
    ok(second);
    expect(second.stdout).toMatch(/^published fails to calc: version 2 \(build .+\)$/m);
    expect(second.stdout).toMatch(/^calc is ready: version 2 with add, fails$/m);
    expect(second.stdout).toMatch(/try it: platform mcp call calc fails/);
    // Not a terminal: the spinner prints each phase once, on stderr.
    expect(second.stderr).toMatch(/✓ calc version 2: ready/);
    const [list, json, get] = await Promise.all([
      cli.run(['mcp', 'tools', 'list', 'calc']),
      cli.run(['mcp', 'tools', 'list', 'calc', '--json']),
      cli.run(['mcp', 'get', 'calc', '--json']),
    ]);
    ok(list);
    expect(list.stdout).toMatch(/^NAME\s+DESCRIPTION\s+CREDENTIAL KEYS\s+UPDATED$/m);
    expect(list.stdout).toMatch(/^add\s+Adds two numbers\.\s+-\s+\S+$/m);
    expect(list.stdout).toMatch(/^fails\s+Always raises\.\s+calc-token\s+\S+$/m);
    const add = json.json.tools.find((t: { name: string }) => t.name === 'add');
    expect(add.schema).toMatchObject({ type: 'object', properties: { a: { type: 'integer' }, b: { type: 'integer', default: 1 } }, required: ['a'] });
    expect(json.json.tools.find((t: { name: string }) => t.name === 'fails')).toMatchObject({ credential_keys: ['calc-token'], credentialKeys: ['calc-token'] });
    expect(get.json.mcp_server).toMatchObject({ state: 'ready', ready: true, version: 2, tool_count: 2, url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/mcp\/.+\/calc$/) });
  });

  it('call types --arg values by the tool\'s schema (JSON when it says nothing), prints the text, and exits 1 with a raising tool\'s text', async () => {
    ok(await cli.run(['mcp', 'tools', 'publish', 'calc', join(src, 'echo.py'), '--schema', join(src, 'schema.json'), '--wait']));
    // The raising tool declares a credential key: without the secret, the call is a tool error too.
    const noSecret = await cli.run(['mcp', 'call', 'calc', 'fails', '--arg', 'reason=x']);
    expect(noSecret.exitCode).toBe(1);
    expect(noSecret.stderr).toMatch(/calc-token/);
    ok(await cli.run(['secrets', 'set', 'calc-token'], { input: 'calc-secret-value' }));
    const [sum, withArgs, num, text, list, raised, raisedJson, noTool, badArg, digits, notInt] = await Promise.all([
      cli.run(['mcp', 'call', 'calc', 'add', '--arg', 'a=2', '--arg', 'b=40']),
      cli.run(['mcp', 'call', 'calc', 'add', '--args', '{"a": 1, "b": 1}', '--arg', 'b=9', '--json']),
      cli.run(['mcp', 'call', 'calc', 'echo', '--arg', 'value=3']),
      cli.run(['mcp', 'call', 'calc', 'echo', '--arg', 'value=Paris', '--arg', 'text=007']),
      cli.run(['mcp', 'call', 'calc', 'echo', '-a', 'value=[1,true,null]']),
      cli.run(['mcp', 'call', 'calc', 'fails', '--arg', 'reason=no thanks']),
      cli.run(['mcp', 'call', 'calc', 'fails', '--arg', 'reason=json', '--json']),
      cli.run(['mcp', 'call', 'calc']),
      cli.run(['mcp', 'call', 'calc', 'add', '--arg', 'oops']),
      cli.run(['mcp', 'call', 'calc', 'echo', '--arg', 'text=123', '--arg', 'value="123"']),
      cli.run(['mcp', 'call', 'calc', 'add', '--arg', 'a=two', '--json']),
    ]);
    ok(sum);
    expect(sum.stdout).toBe('42');
    ok(withArgs);
    expect(withArgs.json).toMatchObject({ server: 'calc', tool: 'add', version: 3, isError: false, content: [{ type: 'text', text: '10' }] });
    expect(withArgs.json.duration_ms).toEqual(expect.any(Number));
    expect(JSON.parse(num.stdout)).toEqual({ value: 3, type: 'int', text: '' });
    expect(JSON.parse(text.stdout)).toEqual({ value: 'Paris', type: 'str', text: '007' });
    expect(JSON.parse(list.stdout)).toEqual({ value: [1, true, null], type: 'list', text: '' });
    expect(raised.exitCode).toBe(1);
    expect(raised.stdout).toBe('');
    expect(raised.stderr).toMatch(/refused: no thanks/);
    expect(raisedJson.exitCode).toBe(1);
    expect(raisedJson.json).toMatchObject({ tool: 'fails', isError: true, content: [{ type: 'text', text: expect.stringContaining('refused: json') }] });
    fails(noTool, 2);
    expect(noTool.stderr).toMatch(/TOOL is required without a terminal/);
    expect(noTool.stderr).toMatch(/platform mcp tools list calc/);
    fails(badArg, 2);
    expect(badArg.stderr).toMatch(/--arg oops is not KEY=VALUE/);
    // text is a string parameter: 123 stays the text "123"; value has no type: quoted JSON is a string.
    expect(JSON.parse(digits.stdout)).toEqual({ value: '123', type: 'str', text: '123' });
    fails(notInt, 2);
    expect(notInt.json).toMatchObject({ error: '--arg a: expected an integer, got "two"', next: expect.stringMatching(/^e\.g\. --arg a=3/) });
    const missingTool = await cli.run(['mcp', 'call', 'calc', 'nope']);
    fails(missingTool);
  });

  it('a publish that does not build exits 1 with the message while the previous version keeps serving', async () => {
    const r = await cli.run(['mcp', 'tools', 'publish', 'calc', join(src, 'broken.py'), '--wait']);
    fails(r);
    expect(r.stderr).toMatch(/Error: calc version 4 failed; version 3 keeps serving:/);
    expect(r.stderr).toMatch(/tools\/broken\.py, line \d+: SyntaxError/);
    expect(r.stderr).toMatch(/next: fix the tool and publish again/);
    const [json, call] = await Promise.all([
      cli.run(['mcp', 'tools', 'publish', 'calc', join(src, 'broken.py'), '--wait', '--json']),
      cli.run(['mcp', 'call', 'calc', 'add', '--arg', 'a=1']),
    ]);
    const versions = await cli.run(['mcp', 'versions', 'calc']);
    fails(json);
    expect(json.json.error).toMatch(/^calc version 5 failed; version 3 keeps serving:\n.*SyntaxError/);
    ok(call);
    expect(call.stdout).toBe('2');
    ok(versions);
    expect(versions.stdout).toMatch(/^VERSION\s+STATE\s+TOOLS\s+CREDENTIAL KEYS\s+DIGEST\s+CREATED$/m);
    expect(versions.stdout).toMatch(/^5\s+failed\s+add,broken,echo,fails\s+calc-token\s/m);
    expect(versions.stdout).toMatch(/^3 \(current\)\s+ready\s+add,echo,fails\s+calc-token\s+\S+/m);
    expect(versions.stderr).toMatch(/version 5 failed: .*SyntaxError/);
    // Drop the broken tool again (a new version without it), confirming with --yes.
    const del = await cli.run(['mcp', 'tools', 'delete', 'calc', 'broken', '--yes', '--wait', '--json']);
    ok(del);
    expect(del.json).toMatchObject({ server: 'calc', name: 'broken', deleted: true, version: 6, mcp_server: { state: 'ready', version: 6, tool_names: ['add', 'echo', 'fails'] } });
  });

  it('versions, rollback, yank and unyank, with each 409 explained', async () => {
    const versions = await cli.run(['mcp', 'versions', 'calc', '--json']);
    ok(versions);
    expect(versions.json.versions.map((v: { version: number }) => v.version)).toEqual([6, 5, 4, 3, 2, 1]);
    expect(versions.json.versions[0]).toMatchObject({ version: 6, current: true, state: 'ready', image_digest: expect.any(String) });
    const rollback = await cli.run(['mcp', 'rollback', 'calc', '1']);
    ok(rollback);
    expect(rollback.stdout).toMatch(/^calc now runs version 1 \(.+\)$/m);
    expect((await cli.run(['mcp', 'call', 'calc', 'add', '--arg', 'a=5'])).stdout).toBe('6');
    const [yankRunning, yank2, noImage, missing, notNumber] = await Promise.all([
      cli.run(['mcp', 'yank', 'calc', '1']),
      cli.run(['mcp', 'yank', 'calc', '2', '--json']),
      cli.run(['mcp', 'rollback', 'calc', '4']),
      cli.run(['mcp', 'rollback', 'calc', '99']),
      cli.run(['mcp', 'rollback', 'calc', 'two', '--json']),
    ]);
    fails(yankRunning);
    expect(yankRunning.stderr).toMatch(/next: roll back to another version first \(`platform mcp rollback calc VERSION`\)/);
    ok(yank2);
    expect(yank2.json).toEqual({ server: 'calc', version: 2, yanked: true });
    fails(noImage);
    expect(noImage.stderr).toMatch(/next: that version never built/);
    fails(missing);
    expect(missing.stderr).toMatch(/next: see the versions with `platform mcp versions calc`/);
    fails(notNumber);
    expect(notNumber.json).toMatchObject({ status: 400 });
    const yanked = await cli.run(['mcp', 'rollback', 'calc', '2']);
    fails(yanked);
    expect(yanked.stderr).toMatch(/next: make it a rollback target again with `platform mcp unyank calc 2`/);
    const table = await cli.run(['mcp', 'versions', 'calc']);
    expect(table.stdout).toMatch(/^2\s+ready \(yanked\)/m);
    expect(table.stdout).toMatch(/^1 \(current\)\s+ready/m);
    const unyank = await cli.run(['mcp', 'unyank', 'calc', '2']);
    ok(unyank);
    expect(unyank.stdout).toBe('calc version 2 can be rolled back to again');
    const back = await cli.run(['mcp', 'rollback', 'calc', '2', '--wait', '--json']);
    ok(back);
    expect(back.json).toMatchObject({ server: 'calc', version: 2, rolled_back: true, mcp_server: { state: 'ready', version: 2 } });
  });

  it('publish DIR makes one version from the folder, keeps or prunes the rest, and makes none for an unchanged folder', async () => {
    const dir = join(cli.home, 'folder');
    mkdirSync(dir);
    writeFileSync(join(dir, 'add.py'), ADD);
    writeFileSync(join(dir, 'echo.py'), ECHO);
    writeFileSync(join(dir, '_helpers.py'), '# not a tool\n');
    writeFileSync(join(dir, 'mcp.json'), JSON.stringify({ tools: { echo: { description: 'Echo from mcp.json', credential_keys: ['echo-key'] } } }));
    ok(await cli.run(['mcp', 'create', 'folder']));
    const first = await cli.run(['mcp', 'publish', 'folder', dir, '--wait', '--verbose']);
    ok(first);
    expect(first.stderr).toMatch(/skipped _helpers\.py/);
    // --verbose: each state change of the awaited version on a line of its own, no spinner.
    expect(first.stderr).toMatch(/^folder version 1: ready$/m);
    expect(first.stderr).not.toMatch(/✓/);
    expect(first.stdout).toMatch(/^folder: 2 published as version 1 \(add, echo\)$/m);
    expect(first.stdout).toMatch(/^folder is ready: version 1 with add, echo$/m);
    const again = await cli.run(['mcp', 'publish', 'folder', dir, '--wait', '--json']);
    ok(again);
    expect(again.json).toMatchObject({ server: 'folder', published: [], removed: [], unchanged: ['add', 'echo'], mcp_server: { version: 1 } });
    expect(again.json.version).toBeUndefined();
    const tools = await cli.run(['mcp', 'tools', 'list', 'folder', '--json']);
    expect(tools.json.tools.find((t: { name: string }) => t.name === 'echo')).toMatchObject({ description: 'Echo from mcp.json', credential_keys: ['echo-key'] });
    // One module changed, one gone: one version with the change (the other kept), then --prune removes it.
    writeFileSync(join(dir, 'add.py'), ADD.replace('return a + b', 'return a + b + 100'));
    writeFileSync(join(dir, 'mcp.json'), '{}');
    const { rmSync } = await import('node:fs');
    rmSync(join(dir, 'echo.py'));
    const kept = await cli.run(['mcp', 'publish', 'folder', dir, '--wait', '--json']);
    ok(kept);
    expect(kept.json).toMatchObject({ published: ['add'], removed: [], kept: ['echo'], version: 2, mcp_server: { version: 2, tool_names: ['add', 'echo'] } });
    const pruned = await cli.run(['mcp', 'publish', 'folder', dir, '--prune', '--wait']);
    ok(pruned);
    expect(pruned.stdout).toMatch(/^folder: 0 published, 1 removed as version 3 \(add\)$/m);
    expect(pruned.stdout).toMatch(/^folder is ready: version 3 with add$/m);
    expect((await cli.run(['mcp', 'call', 'folder', 'add', '--arg', 'a=1'])).stdout).toBe('102');
    // A syntax error in one module fails that one version; version 3 keeps serving. The same
    // folder again is not "unchanged and done": it is built again (and fails again).
    writeFileSync(join(dir, 'broken.py'), BROKEN);
    const broken = await cli.run(['mcp', 'publish', 'folder', dir, '--wait']);
    fails(broken);
    expect(broken.stderr).toMatch(/Error: folder version 4 failed; version 3 keeps serving:\n.*tools\/broken\.py, line \d+: SyntaxError/);
    const same = await cli.run(['mcp', 'publish', 'folder', dir, '--wait', '--json']);
    fails(same);
    expect(same.json.error).toMatch(/^folder version 5 failed; version 3 keeps serving:\n.*SyntaxError/);
    expect((await cli.run(['mcp', 'call', 'folder', 'add', '--arg', 'a=2'])).stdout).toBe('103');
    expect((await cli.run(['mcp', 'versions', 'folder', '--json'])).json.versions.map((v: { version: number }) => v.version)).toEqual([5, 4, 3, 2, 1]);
  });

  it('init --template mcp-python gives a module that publishes and answers', async () => {
    const dir = join(cli.home, 'greeter');
    const init = await cli.run(['init', dir, '--template', 'mcp-python']);
    ok(init);
    expect(init.stdout).toMatch(/next: platform mcp create greeter && platform mcp publish greeter .+ --wait/);
    ok(await cli.run(['mcp', 'create', 'greeter']));
    ok(await cli.run(['mcp', 'publish', 'greeter', dir, '--wait']));
    const r = await cli.run(['mcp', 'call', 'greeter', 'greet', '--arg', 'name=Ada', '--arg', 'style=excited', '--arg', 'times=2']);
    ok(r);
    expect(r.stdout).toBe('Hello, Ada! Hello, Ada!');
  });

  it('delete asks, refuses without a terminal or with --json and no --yes, and deletes with --yes', async () => {
    const [noTty, json, toolNoTty] = await Promise.all([
      cli.run(['mcp', 'delete', 'public-calc']),
      cli.run(['mcp', 'delete', 'public-calc', '--json']),
      cli.run(['mcp', 'tools', 'delete', 'calc', 'add']),
    ]);
    fails(noTty, 2);
    expect(noTty.stderr).toMatch(/pass --yes/);
    fails(json, 2);
    expect(json.json).toMatchObject({ error: expect.stringMatching(/needs confirmation/), next: 'pass --yes' });
    fails(toolNoTty, 2);
    const yes = await cli.run(['mcp', 'delete', 'public-calc', '--yes', '--json']);
    ok(yes);
    expect(yes.json).toEqual({ name: 'public-calc', deleted: true });
    const gone = await cli.run(['mcp', 'get', 'public-calc', '--json']);
    fails(gone);
    expect(gone.json).toMatchObject({ status: 404, next: expect.stringMatching(/platform mcp list/) });
    const human = await cli.run(['mcp', 'delete', 'greeter', '-y']);
    ok(human);
    expect(human.stdout).toBe('deleted greeter');
  });

  it('-p/--project acts on another project', async () => {
    ok(await cli.run(['projects', 'create', 'other']));
    const created = await cli.run(['mcp', 'create', 'elsewhere', '-p', 'other', '--json']);
    ok(created);
    const [there, here, envVar] = await Promise.all([
      cli.run(['mcp', 'list', '--project', 'other', '--json']),
      cli.run(['mcp', 'list', '--json']),
      cli.run(['mcp', 'get', 'elsewhere', '--json'], { env: { PLATFORM_PROJECT: 'other' } }),
    ]);
    expect(there.json.mcpservers.map((s: { name: string }) => s.name)).toEqual(['elsewhere']);
    expect(here.json.mcpservers.map((s: { name: string }) => s.name)).not.toContain('elsewhere');
    ok(envVar);
    const missing = await cli.run(['mcp', 'list', '-p', 'no-such-project']);
    fails(missing);
  });
  it('a project member reads and calls; admin-only commands answer 403 with who can run them', async () => {
    ok(await cli.run(['service-accounts', 'create', 'mcp-reader', '--role', 'member']));
    const key = await cli.run(['service-accounts', 'keys', 'create', 'mcp-reader', 'cli']);
    ok(key);
    const env = { PLATFORM_TOKEN: key.stdout.trim() };
    const [list, get, tools, versions, call, create, publish, rollback, del] = await Promise.all([
      cli.run(['mcp', 'list', '--json'], { env }),
      cli.run(['mcp', 'get', 'calc', '--json'], { env }),
      cli.run(['mcp', 'tools', 'list', 'calc', '--json'], { env }),
      cli.run(['mcp', 'versions', 'calc', '--json'], { env }),
      cli.run(['mcp', 'call', 'calc', 'add', '--arg', 'a=1', '--arg', 'b=1'], { env }),
      cli.run(['mcp', 'create', 'by-member'], { env }),
      cli.run(['mcp', 'tools', 'publish', 'calc', join(src, 'add.py'), '--json'], { env }),
      cli.run(['mcp', 'rollback', 'calc', '1'], { env }),
      cli.run(['mcp', 'delete', 'calc', '--yes', '--json'], { env }),
    ]);
    for (const r of [list, get, tools, versions, call]) ok(r);
    expect(call.stdout).toBe('2');
    for (const r of [create, rollback]) {
      fails(r);
      expect(r.stderr).toMatch(/next: this needs a project admin/);
    }
    for (const r of [publish, del]) {
      fails(r);
      expect(r.json).toMatchObject({ status: 403, next: expect.stringMatching(/project admin/) });
    }
  });

  const hasScript = existsSync('/usr/bin/script');
  if (!hasScript) console.warn('SKIPPED: the interactive pick needs util-linux `script` to give the CLI a terminal');
  it.skipIf(!hasScript)('call without TOOL on a terminal picks the tool from a list and asks for its arguments', async () => {
    const bin = join(import.meta.dirname, '..', '..', 'bin', 'run.js');
    const p = execa('script', ['-qfec', `node ${bin} mcp call calc`, '/dev/null'], { env: cli.env, extendEnv: true, reject: false, timeout: 60_000 });
    let out = '';
    const answered = new Set<string>();
    // Answer each prompt once it is up (input typed earlier would be echoed by the terminal itself).
    const answers: [RegExp, string][] = [
      // The rollback to version 2 above made its set (add, fails) the current one.
      [/tool \[1-2 or name\]: /, 'add'],
      [/a \(integer, required\): /, 'twenty'],
      [/expected an integer, got "twenty"[\s\S]*a \(integer, required\): /, '20'],
      [/b \(integer, default 1\): /, '22'],
    ];
    p.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      for (const [prompt, answer] of answers) {
        if (!answered.has(answer) && prompt.test(out)) {
          answered.add(answer);
          p.stdin!.write(`${answer}\r`);
        }
      }
    });
    const r = await p;
    expect(r.exitCode, out).toBe(0);
    expect(out).toMatch(/1\. add\s+Adds two numbers\./);
    expect(out).toMatch(/2\. fails\s+Always raises\./);
    expect(out).toMatch(/a: the first number/);
    expect(out.trimEnd()).toMatch(/42$/);
  });
});
