import type { Interfaces } from '@oclif/core';
import { UsageError } from '../client/errors.js';
import { closestCommand } from './suggest.js';

/** The usage error for words that name no command or topic, with the closest one as the next step. */
export function unknownCommandError(config: Interfaces.Config, typed: string[]): UsageError {
  const bin = config.bin;
  const visible = (ids: string[]) => ids.filter((id) => !config.findCommand(id)?.hidden);
  const guess = closestCommand(typed, visible(config.commandIDs), config.topics.map((t) => t.name));
  const topic = config.findTopic(typed[0] ?? '') ? typed[0] : undefined;
  const next = guess
    ? `did you mean \`${bin} ${guess}\`? (every command: \`${bin} --help\`)`
    : topic
      ? `see the commands of ${topic} with \`${bin} ${topic} --help\``
      : `see every command with \`${bin} --help\``;
  return new UsageError(`\`${bin} ${typed.join(' ')}\` is not a ${bin} command`, next);
}

/** Prints an abort error the way BaseCommand.catch does (JSON on stdout under --json). */
export function printAbort(err: UsageError, json: boolean): void {
  if (json) process.stdout.write(JSON.stringify({ error: err.message, ...(err.next ? { next: err.next } : {}) }, null, 2) + '\n');
  else process.stderr.write(`Error: ${err.message}\n${err.next ? `  next: ${err.next}\n` : ''}`);
}
