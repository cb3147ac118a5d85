import { Args, Flags } from '@oclif/core';
import { readFileSync } from 'node:fs';
import { BaseCommand } from '../cli/base-command.js';
import { projectFlag, projectQuery } from '../cli/agent-flags.js';
import { UsageError } from '../client/errors.js';
import { LIMITS } from '../api/agents.js';

/** Slack over the daemon's own limit, so its 504 arrives before the CLI gives up. */
const INVOKE_MARGIN_SECONDS = 15;

export default class Invoke extends BaseCommand {
  static override summary = 'Talk to an agent or function';
  static override examples = [
    '<%= config.bin %> invoke hello -m "hi there"',
    '<%= config.bin %> invoke assistant -m "plan a trip" --stream',
    '<%= config.bin %> invoke hello --data @event.json --session 3f2a9c0d7e6b4a1f8c5d2e0b',
  ];
  static override args = { name: Args.string({ description: 'agent or function name', required: true }) };
  static override flags = {
    message: Flags.string({ char: 'm', description: 'message to send' }),
    session: Flags.string({ description: 'continue this session: the agent sees its earlier turns (anonymous callers: at least 24 characters)' }),
    memorize: Flags.boolean({ description: 'after the turn, turn the session into memories (needs a credential and memory on)' }),
    user: Flags.string({ description: 'user id' }),
    data: Flags.string({ description: 'request body as JSON, or @file.json' }),
    stream: Flags.boolean({ description: 'stream NDJSON lines as they are produced' }),
    timeout: Flags.integer({
      description: `seconds to wait for the answer (default ${LIMITS.timeoutMaxSeconds + INVOKE_MARGIN_SECONDS}; the daemon answers 504 at the agent's timeout_seconds: default ${LIMITS.timeoutDefaultSeconds}, at most ${LIMITS.timeoutMaxSeconds})`,
      min: 1,
    }),
    project: projectFlag,
  };

  async run() {
    const { args, flags } = await this.parse(Invoke);
    let body: Record<string, unknown> = {};
    if (flags.data) {
      const text = flags.data.startsWith('@') ? readFileSync(flags.data.slice(1), 'utf8') : flags.data;
      try {
        body = JSON.parse(text) as Record<string, unknown>;
      } catch (e) {
        throw new UsageError(`--data is not JSON: ${(e as Error).message}`);
      }
    }
    if (flags.message !== undefined) body.message = flags.message;
    if (flags.session) body.session_id = flags.session;
    if (flags.user) body.user_id = flags.user;
    if (flags.memorize) body.memorize = true;
    const client = await this.client();
    const path = `/v1/agents/${encodeURIComponent(args.name)}/invoke${flags.stream ? '/stream' : ''}`;
    // The daemon ends the call at the agent's own timeout (504); the CLI waits a little longer so
    // that answer, not a client-side cut, is what the user sees.
    const waitSeconds = flags.timeout ?? LIMITS.timeoutMaxSeconds + INVOKE_MARGIN_SECONDS;
    const res = await client.request('POST', path, { query: projectQuery(flags.project, flags.context), body, waitSeconds });
    if (!flags.stream) {
      const out = (await res.json()) as Record<string, unknown>;
      this.print(typeof out.output === 'string' ? out.output : JSON.stringify(out, null, 2));
      if (!flags.session && typeof out.session_id === 'string') this.note(`continue this conversation with --session ${out.session_id}`);
      return out;
    }
    // Lines are written as they arrive; under --json they are collected into one array.
    const lines: unknown[] = [];
    let rest = '';
    const decoder = new TextDecoder();
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      const parts = (rest + decoder.decode(chunk, { stream: true })).split('\n');
      rest = parts.pop()!;
      for (const p of parts.filter(Boolean)) {
        const parsed = JSON.parse(p) as unknown;
        lines.push(parsed);
        this.print(p);
      }
    }
    if (rest.trim()) {
      lines.push(JSON.parse(rest) as unknown);
      this.print(rest);
    }
    return lines;
  }
}
