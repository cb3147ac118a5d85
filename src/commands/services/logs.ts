import { once } from 'node:events';
import { Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { projectFlag } from '../../cli/flags.js';
import { serviceArg } from '../../cli/services.js';
import { serverlessRoutes } from '../../api/serverless.js';
import { call } from '../../client/services.js';

/** Slack for a follow that stays open as long as the user watches (no client-side cut at 300 s). */
const FOLLOW_WAIT_SECONDS = 7 * 24 * 3600;

export default class ServicesLogs extends BaseCommand {
  static override summary = 'Print the output of the newest running instance of a service';
  static override description =
    'A service scaled to zero has no instance, so there is nothing to print until the next request starts one (the daemon says so). With -f the stream stays open until the instance stops or Ctrl-C; a stream that breaks ends with a line [log stream ended: <reason>].';
  static override examples = [
    '<%= config.bin %> services logs hello',
    '<%= config.bin %> services logs hello -f',
    '<%= config.bin %> services logs hello --tail 50',
    '<%= config.bin %> services logs hello --json',
  ];
  static override args = { name: serviceArg };
  static override flags = {
    project: projectFlag,
    follow: Flags.boolean({ char: 'f', description: 'keep printing new lines' }),
    tail: Flags.integer({ char: 'n', description: 'lines from the end, 1-10000 (default 500)', min: 1, max: 10_000 }),
  };

  async run() {
    const { args, flags } = await this.parse(ServicesLogs);
    const projectID = this.projectRef(flags.project, flags.context);
    const client = await this.client();
    const path = await client.pathFor(serverlessRoutes.logs, { projectID, name: args.name });
    const follow = flags.follow && !this.jsonEnabled();
    const res = await call(
      client.request('GET', path, {
        query: { tail: flags.tail, follow: follow ? 'true' : undefined },
        headers: { accept: 'text/plain' },
        ...(follow ? { waitSeconds: FOLLOW_WAIT_SECONDS } : {}),
      }),
      { name: args.name },
    );
    if (this.jsonEnabled()) {
      const text = await res.text();
      return { service: args.name, lines: text.split('\n').filter((l, i, all) => l !== '' || i < all.length - 1) };
    }
    // Waits for a slow terminal or pipe instead of buffering a busy tail in memory.
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) if (!process.stdout.write(chunk)) await once(process.stdout, 'drain');
    return undefined;
  }
}
