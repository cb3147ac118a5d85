import { Command, Flags, Errors, type Interfaces } from '@oclif/core';
import { connect, type Connection } from '../client/session.js';
import { AbortError, ApiCallError } from '../client/errors.js';
import { getContext } from '../client/contexts.js';
import { formatFields, formatTable, type Column } from './render.js';
import { DEFAULT_ANSWER_TIMEOUT_SECONDS, setAnswerTimeout } from '../client/answer-timeout.js';

export type BaseFlags<T extends typeof Command> = Interfaces.InferredFlags<(typeof BaseCommand)['baseFlags'] & T['flags']>;

/**
 * Base of every command: shared flags with env fallbacks, `--json` (stdout carries only the
 * result), one catch that turns failures into a message with next steps (or JSON) and an exit
 * code: 1 for API and runtime errors, 2 for usage errors.
 */
export abstract class BaseCommand extends Command {
  static override enableJsonFlag = true;

  static override baseFlags = {
    context: Flags.string({ description: 'context to use (see `platform context list`)', env: 'PLATFORM_CONTEXT', helpGroup: 'GLOBAL' }),
    // A command's own --timeout (invoke, sandbox exec, agents config...) replaces this one; PLATFORM_TIMEOUT still applies there.
    timeout: Flags.integer({
      description: `seconds to wait for the platform to start answering before giving up (default ${DEFAULT_ANSWER_TIMEOUT_SECONDS})`,
      env: 'PLATFORM_TIMEOUT',
      min: 1,
      helpGroup: 'GLOBAL',
    }),
  };

  override async init(): Promise<void> {
    await super.init();
    const ctor = this.constructor as typeof BaseCommand;
    if (ctor.flags?.timeout) return;
    const { flags } = await this.parse(ctor);
    setAnswerTimeout((flags as { timeout?: number }).timeout);
  }

  private connection?: Connection;

  /** Connects to the context's API, starting the local daemon when needed. */
  protected async connect(opts: { anonymous?: boolean } = {}): Promise<Connection> {
    const { flags } = await this.parse(this.constructor as typeof BaseCommand);
    this.connection ??= await connect({ context: (flags as { context?: string }).context, ...opts });
    return this.connection;
  }

  protected async client() {
    return (await this.connect()).client;
  }

  /**
   * The project for project-scoped commands: --project, PLATFORM_PROJECT, else the context's current
   * one (`platform projects use`); the local context falls back to the bootstrap project `default`.
   */
  protected projectRef(flag: string | undefined, contextName?: string): string {
    const context = getContext(contextName);
    const ref = flag ?? context.project ?? (context.kind === 'local' ? 'default' : undefined);
    if (!ref) throw new AbortError('no project selected', 'pass --project SLUG or choose one with `platform projects use SLUG`');
    return ref;
  }

  /** Human output goes to stdout only when --json is off; progress and notes go to stderr. */
  protected print(text: string): void {
    if (!this.jsonEnabled()) this.log(text);
  }

  protected note(text: string): void {
    if (!this.jsonEnabled()) process.stderr.write(`${text}\n`);
  }

  protected table<T>(rows: T[], columns: Column<T>[], empty?: string): void {
    this.print(formatTable(rows, columns, empty));
  }

  protected fields(obj: Record<string, unknown>, order?: string[]): void {
    this.print(formatFields(obj, order));
  }

  protected override async catch(err: Error & { exitCode?: number; oclif?: { exit?: number } }): Promise<unknown> {
    if (err instanceof Errors.ExitError) throw err;
    const json = this.argv.includes('--json');
    const oclifExit = (err as { oclif?: { exit?: number } }).oclif?.exit;
    const usage = !(err instanceof AbortError) && (oclifExit === 2 || /Unexpected argument|Missing required|Nonexistent flag|Expected --/.test(err.message));
    if (!(err instanceof AbortError) && !usage && oclifExit !== undefined && !json) throw err;
    const exit = err instanceof AbortError ? err.exitCode : usage ? 2 : 1;
    const requestId = err instanceof ApiCallError ? err.requestId : undefined;
    const next = err instanceof AbortError ? err.next : usage ? 'see `--help` for usage and examples' : undefined;
    if (json) {
      const body: Record<string, unknown> = { error: err.message };
      if (err instanceof ApiCallError) body.status = err.status;
      if (requestId) body.request_id = requestId;
      if (next) body.next = next;
      process.stdout.write(JSON.stringify(body, null, 2) + '\n');
    } else {
      process.stderr.write(`Error: ${err.message}\n`);
      if (requestId) process.stderr.write(`  request id: ${requestId}\n`);
      if (next) process.stderr.write(`  next: ${next}\n`);
      if (!(err instanceof AbortError) && !usage && process.env.DEBUG) process.stderr.write(`${err.stack}\n`);
    }
    return this.exit(exit);
  }
}
