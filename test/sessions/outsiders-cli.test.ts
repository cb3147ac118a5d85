import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { cast } from '../helpers/fixtures.js';
import { cliSandbox } from '../helpers/cli.js';
import { waitState } from '../agents/helpers.js';
import { deployAgent } from '../knowledge/fixtures.js';

/**
 * Outsiders 404 through the CLI (issue 23): bin/run.js with someone else's credentials
 * (PLATFORM_API_URL and PLATFORM_TOKEN) on sessions, memory and knowledge. A member who did not
 * deploy the agent hears exactly what a missing agent gets; a user with no grant on the project
 * exactly what a missing project gets; the exit code is the same.
 */
let d: TestDaemon;
let c: Awaited<ReturnType<typeof cast>>;
const sb = cliSandbox();
const S = 'outsider-cli-0123456789abcdefghij';

beforeAll(async () => {
  d = await startTestDaemon({ invokeAuthRequired: false });
  c = await cast(d);
  await deployAgent(d, c.admin.token, 'echo', c.project.slug);
  await waitState(d, c.admin.token, 'echo', 'ready', c.project.slug, 60_000);
  const q = `?project=${c.project.slug}`;
  expect((await d.api('POST', `/v1/agents/echo/invoke${q}`, { token: c.admin.token, body: { message: 'hi', session_id: S } })).status).toBe(200);
  expect((await d.api('POST', `/v1/agents/echo/knowledge${q}`, { token: c.admin.token, body: { documents: [{ source: 'faq.md', text: 'Refunds within 14 days.' }] } })).status).toBe(201);
  expect((await d.api('POST', `/v1/agents/echo/memory${q}`, { token: c.admin.token, body: { fact: 'Likes tea.', user_id: 'ada' } })).status).toBe(201);
}, 90_000);
afterAll(async () => {
  await sb.stop();
  await d?.close();
});

const as = (token: string, args: string[], project: string) => sb.run([...args, '--project', project], { env: { PLATFORM_API_URL: d.url, PLATFORM_TOKEN: token } });
// Request ids differ from call to call; everything else of the message must be the same.
const said = (stderr: string) => stderr.replace(/req_[A-Za-z0-9]+/g, 'req_*').trim();

// One command of each area, reads and writes (every route of an area resolves the agent the same
// way and the HTTP tests cover each route; a CLI process costs seconds on a loaded machine).
const COMMANDS = (agent: string) => [
  ['sessions', 'delete', agent, S, '--yes'],
  ['memory', 'erase', agent, '--user', 'ada', '--yes'],
  ['knowledge', 'search', agent, 'refunds'],
];

describe('outsiders get not-found through the CLI', { timeout: 120_000 }, () => {
  it("a member who did not deploy the agent: the missing agent's message and exit code", async () => {
    const runs = await Promise.all(COMMANDS('echo').map((args, i) => Promise.all([as(c.member.token, args, c.project.slug), as(c.admin.token, COMMANDS('ghost')[i]!, c.project.slug)])));
    for (const [i, [outsider, missing]] of runs.entries()) {
      const args = COMMANDS('echo')[i]!;
      expect(missing.exitCode, args.join(' ')).not.toBe(0);
      expect(outsider.exitCode, args.join(' ')).toBe(missing.exitCode);
      expect(said(missing.stderr)).toMatch(/unknown agent ghost/);
      expect(said(outsider.stderr), args.join(' ')).toBe(said(missing.stderr).replaceAll('ghost', 'echo'));
      expect(outsider.stdout).toBe('');
    }
  });

  it("a user with no grant on the project: the missing project's message and exit code, also under --json", async () => {
    const runs = await Promise.all(COMMANDS('echo').map((args) => Promise.all([as(c.outsider.token, args, c.project.slug), as(c.admin.token, args, 'no-such-project')])));
    for (const [i, [outsider, missing]] of runs.entries()) {
      const args = COMMANDS('echo')[i]!;
      expect(missing.exitCode, args.join(' ')).not.toBe(0);
      expect(outsider.exitCode, args.join(' ')).toBe(missing.exitCode);
      expect(said(outsider.stderr), args.join(' ')).toBe(said(missing.stderr));
      expect(said(outsider.stderr)).toMatch(/project not found/);
    }
    const [outsider, missing] = await Promise.all([as(c.outsider.token, ['sessions', 'list', 'echo', '--json'], c.project.slug), as(c.admin.token, ['sessions', 'list', 'echo', '--json'], 'no-such-project')]);
    expect(outsider.exitCode).toBe(missing.exitCode);
    expect({ ...outsider.json, request_id: undefined }).toEqual({ ...missing.json, request_id: undefined });
  });

  it('nothing was changed by the refused commands', async () => {
    const q = `?project=${c.project.slug}`;
    expect((await d.api('GET', `/v1/agents/echo/sessions/${S}${q}`, { token: c.admin.token })).body.session.turn_count).toBe(1);
    expect((await d.api('GET', `/v1/agents/echo/knowledge${q}`, { token: c.admin.token })).body.documents).toHaveLength(1);
    expect((await d.api('GET', `/v1/agents/echo/memory${q}&user_id=ada`, { token: c.admin.token })).body.memories).toHaveLength(1);
  });
});
