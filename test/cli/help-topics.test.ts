import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliSandbox, type CliResult } from '../helpers/cli.js';

/**
 * Every topic's own description, as `platform TOPIC --help` prints it. oclif falls back to the
 * first command's summary when a topic has none, so a new topic without an entry in package.json
 * fails the "every topic is in the table" check below.
 */
const TOPICS: [string, string][] = [
  ['agents env', "An agent's plain environment variables (each change rolls a revision)"],
  ['agents files', "The stored source files of an agent: list, print, replace, remove (applied on redeploy)"],
  ['agents secrets', "Secrets set on one agent only, unversioned, as env variables (each change rolls a revision); for the project's shared, versioned secrets see `platform secrets`"],
  ['agents', "Agents and functions you deployed: list, inspect, redeploy, roll revisions and split traffic, their env, stored files and own secrets"],
  ['auth', "Credentials for scripts: print the current sign-in's access token"],
  ['break-glass', "Time-limited emergency access to a project's contents for platform admins, audited and revocable"],
  ['cache', "Cache instances: real Redis servers with a size class, eviction policy, persistence and optional TLS"],
  ['context', "Contexts: which platform the CLI talks to (the local daemon or a remote server) and with which credentials"],
  ['daemon', "The local daemon (the embedded platform on 127.0.0.1): start, stop, status and its log"],
  ['embed', "The web widget of an agent: allowed origins, greeting, theme, key, and the HTML snippet that embeds it"],
  ['gateway domains', "Custom hostnames: claim, verify by CNAME, release"],
  ['gateway endpoints', "Endpoints: an address, a target workload, auth, allow list and rate limit"],
  ['gateway keys', "API keys of apikey endpoints: secrets shown once, rotation with an overlap"],
  ['gateway', "The gateway: publish workloads on the internet with endpoints, API keys, JWT, allow lists, rate limits and custom domains"],
  ['indexes', "Vector indexes: create them, upsert, query and scroll points, delete points"],
  ['invitations', "Invitations to a project by e-mail: create, list, show, accept, revoke"],
  ['keys', "Your personal API keys for scripts: create (secret shown once), list, revoke"],
  ['knowledge', "Knowledge bases of agents: documents chunked and indexed for full-text (BM25) and vector search"],
  ['mcp tools', "The tools of an MCP server: list them, publish one module, remove one"],
  ['mcp', "MCP servers: Python tools published as immutable versions behind a Model Context Protocol endpoint"],
  ['members', "Members of a project and their roles: add, list, change, remove"],
  ['memory', "Long-term memory of an agent about its end users: policy, list, add, confirm, invalidate, erase, reindex"],
  ['objects', "Local project buckets (folders under the state directory): put, list, get, delete objects; object-store triggers fire on arrival"],
  ['orgs members', "Members of an organization and their roles"],
  ['orgs', "Organizations: the groups of projects and their admins (create, list, delete)"],
  ['projects', "Projects: the unit every resource lives in; create, rename, delete and choose the current one"],
  ['pubsub', "Pub/Sub accounting of a project: storage budget and per-topic counters"],
  ['sandbox', "Code sandbox: run Python in throwaway isolated sandboxes (no network, none of your files) from a warm pool"],
  ['secrets', "The project's shared secrets: versioned values in a vault, bound to agents' env variables, revealed with an audit trail; for one agent's own unversioned secrets see `platform agents secrets`"],
  ['server', "Run the platform for a team: the foreground server with TLS, a setup token for the first admin, access logs, a draining stop, and backup and restore"],
  ['service-accounts keys', "Keys of a service account: create (secret shown once), list, revoke"],
  ['service-accounts', "Service accounts: project members for automation, with their own keys"],
  ['services', "Serverless services: images or source folders as autoscaled, scale-to-zero web services with immutable revisions, traffic splits and tags"],
  ['sessions', "Conversation sessions of an agent: list, show, clone, rewind, delete, turn into memories"],
  ['subscriptions', "Subscriptions on topics: pull or push delivery, ack deadlines, retries and dead letters"],
  ['topics', "Pub/Sub topics: create, list, change retention, delete; publish with `platform publish`"],
  ['triggers', "Triggers: schedules (cron with time zones), topics and buckets that POST to a service, function or agent, with retries and a firing history"],
  ['users', "Accounts on the platform (platform admin): create, list, change, reset a password, delete"],
];

const manifest = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'oclif.manifest.json'), 'utf8')) as {
  commands: Record<string, { summary?: string; hidden?: boolean; pluginName?: string }>;
};

const cli = cliSandbox();
afterAll(() => cli.stop());

describe('help', () => {
  it('every topic of the command tree is in the table', () => {
    const topics = new Set<string>();
    for (const id of Object.keys(manifest.commands)) {
      const words = id.split(':');
      for (let i = 1; i < words.length; i++) topics.add(words.slice(0, i).join(' '));
    }
    expect([...topics].sort()).toEqual(TOPICS.map(([t]) => t).sort());
  });

  // Four at a time, before the table's rows are checked: one CLI start per topic adds up.
  const topicHelp = new Map<string, CliResult>();
  beforeAll(async () => {
    const queue = TOPICS.map(([t]) => t);
    const worker = async () => {
      for (let t = queue.shift(); t; t = queue.shift()) topicHelp.set(t, await cli.run([...t.split(' '), '--help']));
    };
    await Promise.all([worker(), worker(), worker(), worker()]);
  }, 120_000);

  it.each(TOPICS)('`%s --help` opens with its own description', (topic, description) => {
    const r = topicHelp.get(topic)!;
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout.split('\n')[0]).toBe(description);
    // Not one of its commands' summaries (oclif's fallback when a topic has no description).
    const summaries = Object.entries(manifest.commands)
      .filter(([id]) => id.startsWith(topic.replaceAll(' ', ':') + ':'))
      .map(([, c]) => c.summary);
    expect(summaries).not.toContain(description);
  });

  it('the root help lists each top-level topic with the start of its own description', async () => {
    const r = await cli.run(['--help']);
    expect(r.exitCode).toBe(0);
    const topicsBlock = r.stdout.split('\nTOPICS\n')[1]!.split('\nCOMMANDS\n')[0]!;
    for (const [topic, description] of TOPICS.filter(([t]) => !t.includes(' '))) {
      const firstWords = description.split(' ').slice(0, 3).join(' ');
      expect(topicsBlock, topic).toMatch(new RegExp(`^  ${topic} +${firstWords.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`, 'm'));
    }
  });

  it('`help COMMAND`, `COMMAND -h` and `COMMAND --help` print the same help', async () => {
    const [viaHelp, viaShort, viaLong] = await Promise.all([cli.run(['help', 'deploy']), cli.run(['deploy', '-h']), cli.run(['deploy', '--help'])]);
    for (const r of [viaHelp, viaShort, viaLong]) expect(r.exitCode, r.stderr).toBe(0);
    expect(viaLong.stdout).toMatch(/^Deploy an agent or function from a directory\n\nUSAGE\n {2}\$ platform deploy/);
    expect(viaHelp.stdout).toBe(viaLong.stdout);
    expect(viaShort.stdout).toBe(viaLong.stdout);
    const nested = await cli.run(['help', 'agents', 'list']);
    expect(nested.stdout).toMatch(/USAGE\n {2}\$ platform agents list/);
  });

  it('an unknown command suggests the closest one and exits 2', async () => {
    const r = await cli.run(['agnets', 'list']);
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('Error: `platform agnets list` is not a platform command');
    expect(r.stderr).toContain('did you mean `platform agents list`?');
    expect(r.stderr).not.toMatch(/\n\s+at /);
    // Arguments after a mistyped command word do not get in the way of the guess.
    expect((await cli.run(['agents', 'lsit', 'hello'])).stderr).toContain('did you mean `platform agents list`?');
    expect((await cli.run(['delpoy', './agent'])).stderr).toContain('did you mean `platform deploy`?');
    expect((await cli.run(['help', 'agnets'])).stderr).toContain('did you mean `platform agents`?');
    // Nothing close: point at the topic's commands, or at all of them.
    const topicOnly = await cli.run(['agents', 'frobnicate']);
    expect(topicOnly.exitCode).toBe(2);
    expect(topicOnly.stderr).toContain('see the commands of agents with `platform agents --help`');
    expect((await cli.run(['xyzzy'])).stderr).toContain('see every command with `platform --help`');
  });

  it('under --json the unknown-command error is JSON on stdout, in the shape of every other error', async () => {
    const r = await cli.run(['agnets', 'list', '--json']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toBe('');
    expect(r.json).toEqual({
      error: '`platform agnets list` is not a platform command',
      next: 'did you mean `platform agents list`? (every command: `platform --help`)',
    });
    // The same shape as a usage error raised inside a command.
    const usage = await cli.run(['agents', 'list', '--bogus', '--json']);
    expect(usage.exitCode).toBe(2);
    expect(Object.keys(usage.json).sort()).toEqual(['error', 'next']);
  });
});
