import type { Hook } from '@oclif/core';
import { printAbort, unknownCommandError } from '../cli/unknown-command.js';

/** An unknown command suggests the closest one and exits 2 (a usage error), in JSON under --json. */
const hook: Hook<'command_not_found'> = async function (opts) {
  const err = unknownCommandError(opts.config, opts.id.split(':'));
  printAbort(err, opts.argv?.includes('--json') ?? false);
  this.exit(err.exitCode);
};

export default hook;
