/** Time source; tests pass a controllable clock so expiry and windows need no real waiting. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

export class ManualClock implements Clock {
  constructor(private t = Date.now()) {}
  now(): number {
    return this.t;
  }
  advance(ms: number): void {
    this.t += ms;
  }
}

export const isoNow = (clock: Clock) => new Date(clock.now()).toISOString();
