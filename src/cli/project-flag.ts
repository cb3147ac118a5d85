import { Flags } from '@oclif/core';
import { getContext } from '../client/contexts.js';
import { AbortError } from '../client/errors.js';

/**
 * `-p/--project` of every project-scoped command (env PLATFORM_PROJECT): the one definition, so
 * every command spells, abbreviates and documents it the same (test/cli/flag-conventions.test.ts).
 */
export const projectFlag = Flags.string({
  char: 'p',
  description: "project slug, short or id (default: the context's current project; `default` on the local context)",
  env: 'PLATFORM_PROJECT',
});

/** Paging flags shared by list commands (spec 1 §4.1). */
export const pageFlags = {
  'page-size': Flags.integer({ description: 'rows per page (1-200)', min: 1, max: 200 }),
  'page-token': Flags.string({ description: 'token from the previous page' }),
};

/**
 * The project a command acts on: --project, else the context's current project; the local context
 * falls back to the bootstrap project `default`, so a fresh install works without `projects use`.
 */
export function projectOrDefault(flag: string | undefined, contextName?: string): string {
  if (flag) return flag;
  const ctx = getContext(contextName);
  if (ctx.project) return ctx.project;
  if (ctx.kind === 'local') return 'default';
  throw new AbortError('no project selected', 'pass --project SLUG or choose one with `platform projects use SLUG`');
}

/** An invitation token from a bare token, an accept path (/invite/<token>) or a full accept URL. */
export function tokenFromLink(value: string): string {
  const m = /\/invite\/([^/?#\s]+)/.exec(value);
  return (m ? m[1]! : value).trim();
}
