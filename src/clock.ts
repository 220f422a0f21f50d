/** @module The one source of "now": production reads the system clock, tests move a mock. */

export interface Clock {
  now(): Date;
}

export const systemClock: Clock = {
  now: () => new Date(),
};

/**
 * A clock that only moves when told to. Every expiry (sessions, tokens, locks,
 * OAuth flows) is tested by moving this clock, never by sleeping.
 */
export class MockClock implements Clock {
  #ms: number;

  constructor(start: Date | number = Date.UTC(2026, 0, 1)) {
    this.#ms = typeof start === 'number' ? start : start.getTime();
  }

  now(): Date {
    return new Date(this.#ms);
  }

  set(date: Date | number): void {
    this.#ms = typeof date === 'number' ? date : date.getTime();
  }

  advance(ms: number): void {
    this.#ms += ms;
  }
}
