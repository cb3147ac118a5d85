import type { LogLine } from './types.js';

export type Level = 'info' | 'warn' | 'error';
export const LEVEL_RANK: Record<Level, number> = { info: 0, warn: 1, error: 2 };

/** Explicit markers a logging library writes: uppercase words, logfmt and JSON levels. */
const ERROR_WORD = /\b(ERROR|FATAL|CRITICAL|PANIC)\b|^panic: /;
const ERROR_FIELD = /\blevel=(error|err|fatal|critical|panic)\b|"level"\s*:\s*"(error|err|fatal|critical|panic)"/i;
const WARN_WORD = /\b(WARN|WARNING)\b|^\S*Warning: /;
const WARN_FIELD = /\blevel=warn(ing)?\b|"level"\s*:\s*"warn(ing)?"/i;
const QUIET_WORD = /\b(INFO|DEBUG|TRACE|NOTICE)\b/;
const QUIET_FIELD = /\blevel=(info|debug|trace|notice)\b|"level"\s*:\s*"(info|debug|trace|notice)"/i;
/** The first line of a stack trace, and the exception line that ends a Python one (`ValueError: boom`, Node's `TypeError: x`). */
const TRACE_START = /^Traceback \(most recent call last\):|^(Uncaught )?[A-Za-z_][\w.]*(Error|Exception)(: |$)/;
/** Lines that continue a stack trace: indented frames, and the joints of a chained Python traceback. */
const TRACE_CONTINUES = /^\s|^$|^During handling of the above exception|^The above exception was the direct cause/;
/** The daemon's own words for an instance that failed (supervisor and serverless pool). */
const SYSTEM_FAILURE = /crashed|exited before it was ready|failed to start|did not become ready|exit code [1-9]/;
const SYSTEM_WARNING = /dropped|not sent|stopping: .*(error|fail)/;

/**
 * The level of a line, from its stream and its words. `previous` is the line before it from the
 * same instance: an indented line after an error line is part of that error (a stack frame).
 */
export function levelOf(line: LogLine, previous?: { line: LogLine; level: Level }): Level {
  const m = line.message;
  if (line.stream === 'system') return SYSTEM_FAILURE.test(m) ? 'error' : SYSTEM_WARNING.test(m) ? 'warn' : 'info';
  if (previous?.level === 'error' && previous.line.stream !== 'system' && TRACE_CONTINUES.test(m)) return 'error';
  if (TRACE_START.test(m)) return 'error';
  // Lowercase "error" in free text ("0 errors") is not a level; an uppercase word or a level field is.
  if (ERROR_WORD.test(m) || ERROR_FIELD.test(m)) return 'error';
  if (WARN_WORD.test(m) || WARN_FIELD.test(m)) return 'warn';
  if (QUIET_WORD.test(m) || QUIET_FIELD.test(m)) return 'info';
  // Unmarked stderr is worth a look (a runtime's complaints), not yet an error.
  return line.stream === 'stderr' ? 'warn' : 'info';
}
