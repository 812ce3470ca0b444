// Failed attempts per remote address on the LAN listener (a wrong device token, a wrong pairing
// secret), in memory: after MAX_FAILURES within WINDOW_MS the address is refused (429, Retry-After)
// until the oldest of them is a window old. A success does not wipe the count: guessing between
// good requests gains nothing.
export interface RateLimiter {
  /** Seconds until `address` may try again; 0: it may now. */
  blockedFor(address: string): number;
  /** Counts a failure against `address`. */
  fail(address: string): void;
}

export const MAX_FAILURES = 10;
export const WINDOW_MS = 60_000;
/** Above this many addresses, the expired ones are swept out on the next failure. */
const SWEEP_AT = 1_000;

export function createRateLimiter(opts: { maxFailures?: number; windowMs?: number; now?: () => number } = {}): RateLimiter {
  const max = opts.maxFailures ?? MAX_FAILURES;
  const windowMs = opts.windowMs ?? WINDOW_MS;
  const now = opts.now ?? Date.now;
  const failures = new Map<string, number[]>();

  function recent(address: string, at: number): number[] {
    const kept = (failures.get(address) ?? []).filter((t) => at - t < windowMs);
    if (kept.length) failures.set(address, kept);
    else failures.delete(address);
    return kept;
  }

  return {
    blockedFor(address) {
      const at = now();
      const kept = recent(address, at);
      if (kept.length < max) return 0;
      return Math.max(1, Math.ceil((kept[kept.length - max]! + windowMs - at) / 1000));
    },
    fail(address) {
      const at = now();
      if (failures.size > SWEEP_AT) for (const key of [...failures.keys()]) recent(key, at);
      const kept = recent(address, at);
      kept.push(at);
      failures.set(address, kept.slice(-max));
    },
  };
}
