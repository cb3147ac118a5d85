import { RETRY_DEFAULTS } from '../../../api/triggers.js';
import type { TriggerCreateBody } from '../../../api/triggers.js';
import { badRequest } from '../../http/errors.js';
import type { Retry } from './store.js';

/** The retry object after defaults, merged onto `current` for a patch. */
export function resolveRetry(input: TriggerCreateBody['retry'], current: Retry = structuredClone(RETRY_DEFAULTS) as Retry): Retry {
  const r: Retry = {
    max_attempts: input?.max_attempts ?? current.max_attempts,
    backoff: { ...current.backoff, ...Object.fromEntries(Object.entries(input?.backoff ?? {}).filter(([, v]) => v !== undefined)) },
  };
  if (r.backoff.maximum_seconds < r.backoff.initial_seconds) throw badRequest('retry.backoff.maximum_seconds must not be below retry.backoff.initial_seconds');
  return r;
}

/** Exponential backoff: the wait after the n-th failed attempt (n >= 1), in ms. */
export function backoffMs(r: Retry, failedAttempts: number): number {
  const { initial_seconds, maximum_seconds, multiplier } = r.backoff;
  return Math.round(Math.min(maximum_seconds, initial_seconds * multiplier ** Math.max(0, failedAttempts - 1)) * 1000);
}

/**
 * Spec 2 §4.4 and spec 1 §6.2: the target's status decides. 2xx succeeds; a 4xx is permanent
 * (a function's CloudEvent 400 means its handler raised), except 408 and 429 which ask to be
 * retried; 5xx, timeouts and connection failures are retried. A redirect is never followed and
 * would not change, so it is permanent too.
 */
export function isPermanent(status: number | undefined): boolean {
  if (status === undefined) return false;
  if (status === 408 || status === 429) return false;
  return status >= 300 && status < 500;
}
