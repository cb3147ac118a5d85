import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliSandbox } from '../helpers/cli.js';

/** `platform knowledge …` through the built CLI against the daemon it spawns. */
const sb = cliSandbox();
const work = mkdtempSync(join(tmpdir(), 'platform-knowledge-cli-'));
const dir = join(work, 'helper');

beforeAll(async () => {
  expect((await sb.run(['init', dir, '--template', 'function-python'])).exitCode).toBe(0);
  const r = await sb.run(['deploy', dir, '--no-wait', '--json']);
  expect(r.exitCode, r.stderr).toBe(0);
  writeFileSync(join(work, 'faq.md'), 'Refunds are paid within 14 days.\n\nShipping is free above 50 euros.');
  writeFileSync(join(work, 'about.md'), 'We sell bicycles and refund any unused part.');
}, 120_000);
afterAll(async () => {
  await sb.stop();
  rmSync(work, { recursive: true, force: true });
});

describe('platform knowledge', { timeout: 120_000 }, () => {
  it('adds files, searches, lists, deletes one and empties', async () => {
    const add = await sb.run(['knowledge', 'add', 'helper', join(work, 'faq.md'), join(work, 'about.md'), '--json']);
    expect(add.exitCode, add.stderr).toBe(0);
    expect(add.json.documents.map((d: any) => d.source)).toEqual([join(work, 'faq.md'), join(work, 'about.md')]);

    const [human, json] = await Promise.all([sb.run(['knowledge', 'search', 'helper', 'refunds paid']), sb.run(['knowledge', 'search', 'helper', 'refunds paid', '--top-k', '1', '--json'])]);
    expect(human.exitCode, human.stderr).toBe(0);
    expect(human.stdout).toMatch(/faq\.md#0.*Refunds are paid/);
    expect(human.stderr).toMatch(/mode: bm25/);
    expect(json.json.results).toHaveLength(1);
    expect(json.json.results[0].source).toBe(join(work, 'faq.md'));

    const list = await sb.run(['knowledge', 'list', 'helper', '--json']);
    expect(list.json.documents).toHaveLength(2);
    const del = await sb.run(['knowledge', 'delete', 'helper', add.json.documents[0].id, '--yes']);
    expect(del.exitCode, del.stderr).toBe(0);
    expect(del.stdout).toMatch(/deleted .*faq\.md \(1 chunks\)/);
    const empty = await sb.run(['knowledge', 'empty', 'helper', '--json', '--yes']);
    expect(empty.json).toEqual({ agent: 'helper', deleted_documents: 1, deleted_chunks: 1 });
  });

  it('reports errors with a non-zero exit', async () => {
    const [unknown, missing] = await Promise.all([sb.run(['knowledge', 'list', 'nobody']), sb.run(['knowledge', 'delete', 'helper', '00000000-0000-4000-8000-000000000000', '--json', '--yes'])]);
    expect(unknown.exitCode).not.toBe(0);
    expect(unknown.stderr).toMatch(/unknown agent nobody/);
    expect(missing.exitCode).not.toBe(0);
    expect(missing.json.error).toMatch(/unknown document/);
  });
});

describe('platform search', { timeout: 120_000 }, () => {
  it('finds the agent by part of its name', async () => {
    const [human, json, none] = await Promise.all([sb.run(['search', 'help']), sb.run(['search', 'HELP', '--kind', 'function', '--json']), sb.run(['search', 'zzz'])]);
    expect(human.exitCode, human.stderr).toBe(0);
    expect(human.stdout).toMatch(/function\s+helper\s+default/);
    expect(json.json.results).toEqual([expect.objectContaining({ kind: 'function', name: 'helper', match: 'prefix' })]);
    expect(none.stdout).toMatch(/nothing matches/);
  });
});

describe('platform embed', { timeout: 120_000 }, () => {
  it('set prints the snippet; get, snippet, rotate and delete', async () => {
    const set = await sb.run(['embed', 'set', 'helper', '--origin', 'https://shop.example', '--origin', 'http://localhost:8080', '--greeting', 'Hi!', '--title', 'Help', '--color', '#0055ff']);
    expect(set.exitCode, set.stderr).toBe(0);
    const snippet = set.stdout.trim();
    expect(snippet).toMatch(/^<script src="http:\/\/127\.0\.0\.1:\d+\/v1\/embed\/widget\.js" data-key="emb_[A-Za-z0-9]{32}" async><\/script>$/);
    const [get, only] = await Promise.all([sb.run(['embed', 'get', 'helper', '--json']), sb.run(['embed', 'snippet', 'helper'])]);
    expect(get.json).toMatchObject({ agent: 'helper', allowed_origins: ['https://shop.example', 'http://localhost:8080'], greeting: 'Hi!', theme: { title: 'Help', color: '#0055ff' }, rate_limit_per_minute: 20 });
    expect(only.stdout.trim()).toBe(snippet);
    const rotated = await sb.run(['embed', 'rotate', 'helper']);
    expect(rotated.exitCode, rotated.stderr).toBe(0);
    expect(rotated.stdout.trim()).not.toBe(snippet);
    const bad = await sb.run(['embed', 'set', 'helper', '--origin', 'shop.example']);
    expect(bad.exitCode).not.toBe(0);
    expect(bad.stderr).toMatch(/origin/);
    const del = await sb.run(['embed', 'delete', 'helper', '--yes']);
    expect(del.stdout).toMatch(/disabled the widget of helper/);
    const gone = await sb.run(['embed', 'get', 'helper']);
    expect(gone.exitCode).not.toBe(0);
  });
});
