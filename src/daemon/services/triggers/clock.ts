import { systemClock, type Clock } from '../../clock.js';
import type { TriggersConfig } from './config.js';

/**
 * The triggers area's time: the daemon's clock, or (tests only) a clock that starts at a chosen
 * instant and runs `rate` times faster, so a schedule across a daylight-saving change or a
 * downtime is observed in seconds with real timers. `realDelay` turns a wait on this clock into
 * a real setTimeout delay.
 */
export interface TriggerClock extends Clock {
  realDelay(ms: number): number;
}

export function triggerClock(daemon: Clock, cfg: TriggersConfig): TriggerClock {
  const t = cfg.testClock;
  if (!t) return { now: () => daemon.now(), realDelay: (ms) => ms };
  const realStart = systemClock.now();
  return {
    now: () => Math.floor(t.startMs + (systemClock.now() - realStart) * t.rate),
    realDelay: (ms) => ms / t.rate,
  };
}
