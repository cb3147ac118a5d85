import { once } from 'node:events';
import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../cli/base-command.js';
import { projectFlag, projectQuery } from '../cli/agent-flags.js';
import { agentRoutes } from '../api/agents.js';

export default class Logs extends BaseCommand {
  static override summary = 'Show the logs of an agent or function';
  static override examples = [
    '<%= config.bin %> logs hello',
    '<%= config.bin %> logs hello -f',
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
    since: Flags.string({ description: 'with --history: lines at or after this RFC 3339 time' }),
    limit: Flags.integer({ description: 'with --history: at most this many lines (default 500)', min: 1 }),
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
    if (flags.history || this.jsonEnabled()) {
      const res = await client.call(agentRoutes.logHistory, { params: { name: args.name }, query: { ...project, since: flags.since, limit: flags.limit?.toString() } });
      for (const l of res.lines) this.print(`${l.ts} ${l.instance} ${l.stream}: ${l.message}`);
      if (!res.lines.length) this.note(`no persisted lines for ${args.name}`);
      return res;
    }
    const res = await client.request('GET', `/v1/agents/${encodeURIComponent(args.name)}/logs`, { query: { ...project, follow: flags.follow ? 'true' : undefined } });
    // Waits for a slow terminal or pipe instead of buffering a busy tail in memory.
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) if (!process.stdout.write(chunk)) await once(process.stdout, 'drain');
    return undefined;
  }
}
