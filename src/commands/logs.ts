import { once } from 'node:events';
import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../cli/base-command.js';
import { projectFlag, projectQuery } from '../cli/agent-flags.js';
import { agentRoutes } from '../api/agents.js';
import { parseSince, SINCE_FORMS } from '../cli/durations.js';
import { AbortError, ApiCallError, UsageError } from '../client/errors.js';
import { followAgentLive, followAgentLogs } from '../tui/logs/sources.js';

/** The daemon's cap on one history read; --since without --limit asks for all of it. */
const HISTORY_MAX = 10_000;

const formatLine = (l: { ts: string; instance: string; stream: string; message: string }) => `${l.ts} ${l.instance} ${l.stream}: ${l.message}`;

export default class Logs extends BaseCommand {
  static override summary = 'Show the logs of an agent or function';
  static override examples = [
    '<%= config.bin %> logs hello',
    '<%= config.bin %> logs hello -f',
    '<%= config.bin %> logs hello --since 5m',
    '<%= config.bin %> logs hello --since 1h -f',
    '<%= config.bin %> logs hello --history --since 2026-01-01T00:00:00Z --limit 100',
    '<%= config.bin %> logs hello --build',
    '<%= config.bin %> logs hello --build --revision 3',
  ];
  static override args = { name: Args.string({ description: 'agent or function name', required: true }) };
  static override flags = {
    follow: Flags.boolean({ char: 'f', description: 'keep printing new lines (with --build: until the running build ends)', exclusive: ['history'] }),
    history: Flags.boolean({ description: 'persisted lines (kept 14 days) instead of the live instance', exclusive: ['build'] }),
    build: Flags.boolean({ description: 'the build output of the newest build (or of --revision)' }),
    revision: Flags.string({ description: 'with --build: the revision whose build to show, by number (3) or name (hello-00003)', dependsOn: ['build'] }),
    since: Flags.string({
      description: 'persisted lines at or after this time: a duration back from now (30s, 5m, 1h, 2d, 1h30m) or an RFC 3339 time; implies --history, and with -f keeps following live afterwards',
      exclusive: ['build'],
    }),
    limit: Flags.integer({ description: `with --history: at most this many lines, the newest (default 500; ${HISTORY_MAX} with --since)`, min: 1, max: HISTORY_MAX }),
    project: projectFlag,
  };

  async run() {
    const { args, flags } = await this.parse(Logs);
    const client = await this.client();
    const project = projectQuery(flags.project, flags.context);
    if (flags.build) {
      const res = await client.request('GET', agentRoutes.buildLog.path.replace('{name}', encodeURIComponent(args.name)), {
        query: { ...project, revision: flags.revision, follow: flags.follow ? 'true' : undefined },
      });
      if (this.jsonEnabled()) return { agent: args.name, ...(flags.revision ? { revision: flags.revision } : {}), output: await res.text() };
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) process.stdout.write(chunk);
      return undefined;
    }
    // Parsed here, not by the daemon (which ignores a value it cannot read): a typo is a usage error, not every line.
    const since = flags.since === undefined ? undefined : parseSince(flags.since);
    if (flags.since !== undefined && !since) throw new UsageError(`--since ${JSON.stringify(flags.since)} is not a time: use ${SINCE_FORMS}`);
    if (since && flags.follow && !this.jsonEnabled()) {
      // As `docker logs --since 5m -f`: what was logged since then, then live, until Ctrl-C.
      await followAgentLogs(
        client,
        { name: args.name, ...project, since, historyLimit: flags.limit ?? HISTORY_MAX },
        { onLine: (l) => (l.instance ? this.print(formatLine(l)) : this.note(l.message)), onNotice: (m) => this.note(m) },
        new AbortController().signal,
      );
      return undefined;
    }
    if (flags.history || since || this.jsonEnabled()) {
      const limit = flags.limit ?? (since ? HISTORY_MAX : undefined);
      const res = await client.call(agentRoutes.logHistory, { params: { name: args.name }, query: { ...project, since: since?.toISOString(), limit: limit?.toString() } });
      for (const l of res.lines) this.print(formatLine(l));
      if (!res.lines.length) this.note(`no persisted lines for ${args.name}${since ? ` since ${since.toISOString()}` : ''}`);
      else if (since && res.count === limit) this.note(`the newest ${limit} lines since ${since.toISOString()}; older ones were left out (narrow --since${limit < HISTORY_MAX ? ' or raise --limit' : ''})`);
      return res;
    }
    if (flags.follow) {
      // The running instance's recent lines, then live until Ctrl-C, across redeploys and a daemon
      // restart (reconnecting with backoff, replayed lines dropped), as the logs view does.
      let followed = false;
      try {
        await followAgentLive(
          client,
          { name: args.name, ...project },
          {
            onLine: (l) => {
              followed = true;
              if (l.instance) this.print(formatLine(l));
              else this.note(l.message);
            },
            onNotice: (m) => this.note(m),
          },
          new AbortController().signal,
        );
      } catch (e) {
        // A 404 once lines came means the agent went away while followed (deleted), not a typo.
        if (followed && e instanceof ApiCallError && e.status === 404) throw new AbortError(`${args.name} no longer exists (deleted): stopped following its logs`);
        throw e;
      }
      return undefined;
    }
    const res = await client.request('GET', `/v1/agents/${encodeURIComponent(args.name)}/logs`, { query: project });
    // Waits for a slow terminal or pipe instead of buffering a busy tail in memory.
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) if (!process.stdout.write(chunk)) await once(process.stdout, 'drain');
    return undefined;
  }
}
