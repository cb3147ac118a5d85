import { Flags } from '@oclif/core';
import { UUID_RE, type ApiClient } from '../client/api-client.js';
import { ask, requireTty } from './prompt.js';
import { AbortError } from '../client/errors.js';
import { orgRoutes } from '../api/orgs.js';

/** Shared flags of project-scoped and list commands, so every command spells them the same. */
export { projectFlag } from './project-flag.js';

export const pageFlags = {
  'page-size': Flags.integer({ description: 'items per page (1-200)', min: 1, max: 200 }),
  'page-token': Flags.string({ description: 'token from the previous page' }),
};

export const pageQuery = (flags: { 'page-size'?: number; 'page-token'?: string }) => ({
  page_size: flags['page-size'],
  page_token: flags['page-token'],
});

export const yesFlag = Flags.boolean({ char: 'y', description: 'do not ask for confirmation' });

/**
 * Asks before a destructive change. Without a terminal there is nobody to ask, so the command
 * fails fast with exit 2 and says to pass --yes (scripts must opt in explicitly).
 */
export async function confirm(yes: boolean | undefined, what: string): Promise<void> {
  if (yes) return;
  requireTty(`confirming "${what}"`, 'pass --yes to confirm without a prompt');
  const answer = (await ask(`${what}? [y/N] `)).trim().toLowerCase();
  if (answer !== 'y' && answer !== 'yes') throw new AbortError('cancelled', undefined, 1);
}

/** The API addresses organizations by UUID; people type slugs, so a slug is looked up in the list. */
export async function resolveOrgId(client: ApiClient, ref: string): Promise<string> {
  if (UUID_RE.test(ref)) return ref;
  let token: string | undefined;
  do {
    const page = await client.call(orgRoutes.list, { query: { page_size: 200, page_token: token } });
    const hit = page.orgs.find((o) => o.slug === ref.toLowerCase());
    if (hit) return hit.id;
    token = page.next_page_token;
  } while (token);
  throw new AbortError(`no organization with slug ${ref}`, 'list them with `platform orgs list`');
}
