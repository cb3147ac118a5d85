import { forbidden } from '../../http/errors.js';
import type { AreaContext } from '../../area.js';
import { requireProjectAccess, type ProjectAccess, type ProjectNeed } from '../accounts/access.js';
import { accessProject } from '../accounts/projects.js';
import type { PersonPrincipal, Principal } from './principal.js';

/**
 * A workload key sees its own project (so the 404 rule does not hide it) but holds no role: it may
 * only mint a secret read token (spec 1 §5). Routes open to any project viewer call this first.
 */
export function refuseWorkload(p: Principal): void {
  if (p.kind === 'workload') throw forbidden('a workload key may only mint a secret read token for its project; this route needs a person or a service account');
}

/**
 * A machine credential (service-account or workload key) can never create or manage credentials,
 * accounts or memberships (spec 1 §4.10). Project routes call this after the project lookup, so a
 * key of another project still gets the 404 of the 404-not-403 rule.
 */
export function requirePerson(p: Principal): asserts p is PersonPrincipal {
  if (p.kind !== 'user') {
    throw forbidden('this route acts for a person; machine credentials (service-account and workload keys) cannot manage credentials, accounts or memberships');
  }
}

/**
 * Project gate for routes that act for a person: 404 for a caller who cannot see the project,
 * then 403 for a machine credential, then the role check of `need`.
 */
export function personProjectAccess(ctx: AreaContext, p: Principal, ref: string, need: ProjectNeed): ProjectAccess & { person: PersonPrincipal } {
  const access = accessProject(ctx, p, ref, 'visible');
  requirePerson(p);
  return { ...requireProjectAccess(access, need), person: p };
}
