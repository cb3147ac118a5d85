import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runtimeAvailable, type Runtime } from '../../src/daemon/runtimes/index.js';
import { TEMPLATES, TEMPLATES_DIR } from '../../src/cli/init-templates.js';
import { fakeFrameworks, wheelsFolder } from '../agents/helpers.js';
import { cliSandbox, type CliResult } from '../helpers/cli.js';

/**
 * Every template, as `platform init` writes it, deploys offline to a real daemon and answers.
 * The agent templates pin real framework packages; offline, the daemon installs from
 * PLATFORM_PIP_FIND_LINKS as their READMEs say, here a folder of wheels carrying the pinned names
 * and versions with the shims' stand-in frameworks inside (PyPI is unreachable on the test machine).
 */
const pinned = (template: string) =>
  readFileSync(join(TEMPLATES_DIR, template, 'requirements.txt'), 'utf8')
    .split('\n')
    .filter((l) => /^[A-Za-z]/.test(l))
    .map((l) => l.split('=='));
const STAND_INS: Record<string, string> = { 'google-adk': 'google/', langgraph: 'langgraph/', crewai: 'crewai/' };
const wheels = wheelsFolder(
  ['agent-adk', 'agent-langgraph', 'agent-crewai'].flatMap(pinned).map(([name, version]) => ({ name: name!, version: version!, files: fakeFrameworks(STAND_INS[name!]!) })),
);

const cli = cliSandbox({ PLATFORM_PIP_FIND_LINKS: wheels });
const root = mkdtempSync(join(tmpdir(), 'init-templates-'));
afterAll(() => cli.stop());

/** The tests deploy concurrently (one daemon builds them side by side), so each uses its own expect. */
const ok = (r: CliResult, e: typeof expect) => e(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);

// Started once before the concurrent tests, which would otherwise each start one.
beforeAll(async () => ok(await cli.run(['daemon', 'start']), expect), 60_000);

/** What each template answers to the message "world" (the stand-in frameworks answer deterministically). */
const ANSWERS: Record<string, RegExp> = {
  'function-python': /hello world/,
  'function-nodejs': /hello world/,
  'function-go': /hello world/,
  'function-ruby': /hello world/,
  'agent-langgraph': /you said: world/,
  'agent-adk': /Answer 1: world/,
  'agent-crewai': /Helper answered: Answer: world/,
};

const runtimeOf = (template: string): Runtime | undefined => (template.startsWith('function-') ? (template.slice('function-'.length) as Runtime) : undefined);
const available = Object.fromEntries(
  await Promise.all(TEMPLATES.map(async (t) => [t.name, runtimeOf(t.name) ? await runtimeAvailable(runtimeOf(t.name)!) : { ok: true }] as const)),
);

describe.concurrent('every template deploys as generated and answers', () => {
  it('the templates dir holds exactly the templates init offers, each with a README and a gitignore', ({ expect }) => {
    expect(readdirSync(TEMPLATES_DIR).sort()).toEqual(TEMPLATES.map((t) => t.name).sort());
    for (const t of TEMPLATES) {
      const files = readdirSync(join(TEMPLATES_DIR, t.name));
      expect(files, t.name).toEqual(expect.arrayContaining(['README.md', 'gitignore']));
      // The README says how to deploy (or publish) and call it.
      expect(readFileSync(join(TEMPLATES_DIR, t.name, 'README.md'), 'utf8'), t.name).toMatch(t.kind === 'mcp' ? /platform mcp publish[\s\S]*platform mcp call/ : /platform deploy[\s\S]*platform invoke[\s\S]*platform dev/);
    }
  });

  for (const t of TEMPLATES.filter((x) => x.kind !== 'mcp')) {
    const why = available[t.name]!.reason;
    if (why) console.warn(`SKIPPED: ${t.name}: ${why}`);
    it.skipIf(!available[t.name]!.ok)(`${t.name}: init, deploy, invoke`, { timeout: 180_000 }, async ({ expect }) => {
      const name = `t-${t.name}`;
      const dir = join(root, name);
      const init = await cli.run(['init', dir, '--template', t.name, '--json']);
      ok(init, expect);
      expect(existsSync(join(dir, '.gitignore'))).toBe(true);
      expect(existsSync(join(dir, 'gitignore'))).toBe(false);
      expect(init.json.files).toEqual(expect.arrayContaining(['.gitignore', 'README.md', 'platform.json']));
      ok(await cli.run(['deploy', dir, '--json']), expect);
      const r = await cli.run(['invoke', name, '--message', 'world', '--json']);
      ok(r, expect);
      expect(JSON.stringify(r.json)).toMatch(ANSWERS[t.name]!);
    });
  }

  it('mcp-python: init, publish, call', { timeout: 180_000 }, async ({ expect }) => {
    const dir = join(root, 'greeter');
    ok(await cli.run(['init', dir, '--template', 'mcp-python']), expect);
    expect(existsSync(join(dir, '.gitignore'))).toBe(true);
    ok(await cli.run(['mcp', 'create', 'greeter']), expect);
    ok(await cli.run(['mcp', 'publish', 'greeter', dir, '--wait']), expect);
    const r = await cli.run(['mcp', 'call', 'greeter', 'greet', '--arg', 'name=world']);
    ok(r, expect);
    expect(r.stdout).toBe('Hello, world.');
  });
});
