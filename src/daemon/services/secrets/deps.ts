import type { AreaContext } from '../../area.js';
import { ApiError } from '../../http/errors.js';
import type { MasterKey } from './master-key.js';

/** What every secrets operation works with: the shared context and the store's master key. */
export interface Deps {
  ctx: AreaContext;
  key: MasterKey;
}

/**
 * Runs store work and turns a failure of the database itself (locked, corrupt, gone) into 503:
 * an unreachable store must never look like an empty one. The message carries no value.
 */
export function guardStore<T>(d: Deps, what: string, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof ApiError) throw e;
    d.ctx.log.error('secret store failure', { what, error: (e as Error).message });
    throw new ApiError(503, `the project secret store is unreachable (${what} failed); try again`);
  }
}
