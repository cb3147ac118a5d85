import { AbortError } from './errors.js';

/** The readiness fields every resource view carries (spec 1 conventions: state, ready, message). */
export interface Readiness {
  state: string;
  ready: boolean;
  message?: string;
}

/**
 * Reads a resource until it says `ready`, for the `--wait` flags of create commands. A resource
 * that settles in a state it does not leave by itself (`failed`, `deleting`) is reported at once
 * rather than after the whole timeout. Polling, not an event: the API has no watch route.
 */
export async function waitUntilReady<T extends Readiness>(
  read: () => Promise<T>,
  o: { what: string; next: string; timeoutMs?: number; intervalMs?: number; settled?: (v: T) => boolean },
): Promise<T> {
  const timeoutMs = o.timeoutMs ?? 120_000;
  const deadline = Date.now() + timeoutMs;
  let view: T;
  for (;;) {
    view = await read();
    if (view.ready) return view;
    if (o.settled?.(view)) throw new AbortError(`${o.what} is ${view.state}${view.message ? `: ${view.message}` : ''}`, o.next);
    if (Date.now() >= deadline) break;
    await new Promise((r) => setTimeout(r, o.intervalMs ?? 200));
  }
  const seconds = Math.round(timeoutMs / 1000);
  throw new AbortError(`${o.what} is not ready after ${seconds >= 120 ? `${seconds / 60} minutes` : `${seconds} s`}: ${view.message ?? view.state}`, o.next);
}
