import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliSandbox } from '../helpers/cli.js';

/** `platform sessions …`, `platform memory …` and `invoke --session` through the built CLI and its own daemon. */
const sb = cliSandbox();
const work = mkdtempSync(join(tmpdir(), 'platform-sessions-cli-'));
const dir = join(work, 'echo');
const S = 'cli-session-0123456789abcdefghij';

beforeAll(async () => {
  mkdirSync(dir);
  writeFileSync(join(dir, 'platform.json'), JSON.stringify({ framework: 'function', runtime: 'python' }));
  writeFileSync(
    join(dir, 'main.py'),
    'def handle(event):\n    return {"output": "turn %d: %s" % (len(event.get("history", [])) + 1, event["message"]), "memories": event.get("memories", [])}\n',
  );
  const r = await sb.run(['deploy', dir]);
  expect(r.exitCode, r.stderr).toBe(0);
}, 120_000);
afterAll(async () => {
  await sb.stop();
  rmSync(work, { recursive: true, force: true });
});

describe('platform sessions and memory', { timeout: 120_000 }, () => {
  it('invoke --session continues; clone, rewind, memorize, invalidate, erase', async () => {
    const first = await sb.run(['invoke', 'echo', '-m', 'My name is Ada. I like green tea.']);
    expect(first.exitCode, first.stderr).toBe(0);
    expect(first.stdout).toBe('turn 1: My name is Ada. I like green tea.');
    expect(first.stderr).toMatch(/continue this conversation with --session [A-Za-z0-9]{32}/);
    expect((await sb.run(['invoke', 'echo', '-m', 'one', '--session', S])).stdout).toBe('turn 1: one');
    expect((await sb.run(['invoke', 'echo', '-m', 'two', '--session', S])).stdout).toBe('turn 2: two');

    const [list, get] = await Promise.all([sb.run(['sessions', 'list', 'echo', '--json']), sb.run(['sessions', 'get', 'echo', S])]);
    expect(list.json.sessions.map((s: any) => s.turn_count)).toEqual([2, 1]);
    expect(get.stdout).toMatch(/turn_count +2/);
    expect(get.stdout).toMatch(/2 +two +turn 2: two/);

    const clone = await sb.run(['sessions', 'clone', 'echo', S, '--new-id', `${S}-b`]);
    expect(clone.stdout).toMatch(/2 turns copied/);
    const rewind = await sb.run(['sessions', 'rewind', 'echo', S, '--after', '1', '--yes']);
    expect(rewind.stdout).toMatch(/dropped 1 turn, 1 left/);
    const [a, b] = await Promise.all([sb.run(['invoke', 'echo', '-m', 'x', '--session', S]), sb.run(['invoke', 'echo', '-m', 'y', '--session', `${S}-b`])]);
    expect([a.stdout, b.stdout]).toEqual(['turn 2: x', 'turn 3: y']);

    const off = await sb.run(['sessions', 'memorize', 'echo', S]);
    expect(off.exitCode).not.toBe(0);
    expect(off.stderr).toMatch(/memory is off/);
    expect(off.stderr).toContain('turn it on with `platform memory policy echo --enable`');
    expect(off.stderr).not.toMatch(/\/v1\//);
    const policy = await sb.run(['memory', 'policy', 'echo', '--enable', '--scope', 'agent', '--json']);
    expect(policy.json.policy).toMatchObject({ enabled: true, scope: 'agent' });
    const firstSession = first.stderr.match(/--session ([A-Za-z0-9]{32})/)![1]!;
    const mem = await sb.run(['sessions', 'memorize', 'echo', firstSession]);
    expect(mem.stdout).toMatch(/2 memories from session .* \(deterministic extractor; 0 already known\)/);
    const listed = await sb.run(['memory', 'list', 'echo', '--json']);
    expect(listed.json.memories.map((m: any) => m.fact).sort()).toEqual(['I like green tea.', 'My name is Ada.']);
    const tea = listed.json.memories.find((m: any) => m.fact === 'I like green tea.').id;

    const [inv, added] = await Promise.all([sb.run(['memory', 'invalidate', 'echo', tea]), sb.run(['memory', 'add', 'echo', 'Works nights', '--user', 'ada'])]);
    expect(inv.stdout).toBe(`invalidated ${tea}: I like green tea.`);
    expect(added.stdout).toMatch(/^added mem_/);
    // Agent scope serves every entry that is not invalidated, whoever it is about.
    expect((await sb.run(['invoke', 'echo', '-m', 'tea?', '--json'])).json.memories.sort()).toEqual(['My name is Ada.', 'Works nights']);

    const [status, confirm, reindex] = await Promise.all([
      sb.run(['memory', 'status', 'echo', '--json']),
      sb.run(['memory', 'confirm', 'echo', tea]),
      sb.run(['memory', 'reindex', 'echo']),
    ]);
    expect(status.json.entries).toMatchObject({ total: 3, invalidated: 1, manual: 1 });
    expect(confirm.stdout).toMatch(/^confirmed /);
    expect(reindex.stdout).toMatch(/^reindexed 3 memories at /);
    const [erase, del, sdel] = await Promise.all([
      sb.run(['memory', 'erase', 'echo', '--user', 'ada', '--yes']),
      sb.run(['memory', 'delete', 'echo', tea, '--yes']),
      sb.run(['sessions', 'delete', 'echo', `${S}-b`, '--yes']),
    ]);
    expect(erase.stdout).toBe('erased 1 memory of ada');
    expect(del.stdout).toBe(`deleted ${tea}: I like green tea.`);
    expect(sdel.stdout).toBe(`deleted session ${S}-b (3 turns)`);
    const policy2 = await sb.run(['memory', 'policy', 'echo', '--no-exclude-sensitive', '--topic', 'travel', '--topic', 'food, drink', '--instructions', 'Be brief.', '--no-knowledge', '--json']);
    expect(policy2.exitCode, policy2.stderr).toBe(0);
    expect(policy2.json.policy).toEqual({
      enabled: true,
      scope: 'agent',
      retention_days: null,
      inject: 5,
      exclude_sensitive: false,
      topics: ['travel', 'food, drink'],
      instructions: 'Be brief.',
      knowledge_enabled: false,
    });
    const shown = await sb.run(['memory', 'policy', 'echo']);
    expect(shown.stdout).toMatch(/exclude_sensitive +no/);
    expect(shown.stdout).toMatch(/topics +travel, food, drink/);
    expect(shown.stdout).toMatch(/knowledge_enabled +no/);
    const back = await sb.run(['memory', 'policy', 'echo', '--exclude-sensitive', '--clear-topics', '--instructions', '', '--knowledge', '--json']);
    expect(back.json.policy).toMatchObject({ exclude_sensitive: true, topics: [], instructions: '', knowledge_enabled: true });
    const both = await sb.run(['memory', 'policy', 'echo', '--topic', 'x', '--clear-topics']);
    expect(both.exitCode).not.toBe(0);
    const bad = await sb.run(['sessions', 'get', 'echo', 'bad*id']);
    expect(bad.exitCode).not.toBe(0);
    expect(bad.stderr).toMatch(/invalid session id/);
  });
});
