/**
 * The arithmetic of a token bucket kept as one number, the "theoretical arrival time" (the
 * GCRA form), as pure functions: the in-memory bucket (budgets/token-bucket.ts) and the one
 * replicas share in PostgreSQL (budgets/postgres/bucket.ts) both compute with these,
 * so the two cannot drift apart.
 *
 * A bucket of `capacity` tokens refilled at `perMinute`, starting full; its whole state is
 * `arrival` (-Infinity for a bucket never taken from). Over any window of W ms it lets
 * through at most `capacity + perMinute * W / 60_000` takes.
 */
export interface GcraRules {
  /** ms between two tokens at the sustained rate. */
  spacingMs: number;
  /** How far ahead of `now` the theoretical arrival time may run: the burst allowance, ms. */
  toleranceMs: number;
}

/** An arrival time that lets a take through at any instant: a full bucket. */
export const FULL = Number.NEGATIVE_INFINITY;

/**
 * @param perMinute sustained rate, tokens per minute (> 0)
 * @param capacity burst size, tokens (>= 1; a fraction is rounded down)
 */
export function gcraRules(perMinute: number, capacity: number): GcraRules {
  if (!(perMinute > 0)) throw new RangeError(`perMinute must be > 0, got ${perMinute}`);
  if (!(capacity >= 1)) throw new RangeError(`capacity must be >= 1, got ${capacity}`);
  const spacingMs = 60_000 / perMinute;
  return { spacingMs, toleranceMs: (Math.floor(capacity) - 1) * spacingMs };
}

/**
 * The earliest instant (ms, the clock of `now`) at which a token is available, once `ahead`
 * takes have gone before it. Rounded up to a whole ms, so that a timer armed for it finds the
 * token there.
 */
export function gcraReadyAt(arrival: number, now: number, ahead: number, rules: GcraRules): number {
  const from = Math.max(arrival, now);
  return Math.max(now, Math.ceil(from + ahead * rules.spacingMs - rules.toleranceMs));
}

/** The arrival time after a take at `now` (which gcraReadyAt(arrival, now, 0) allows). */
export function gcraAfterTake(arrival: number, now: number, rules: GcraRules): number {
  return Math.max(arrival, now) + rules.spacingMs;
}

/**
 * How many of `count` takes the bucket allows at `now` one after the other (0: none): the
 * largest n <= count with gcraReadyAt(arrival, now, n - 1) <= now, that is with
 * from + (n - 1) * spacing - tolerance <= floor(now). The bucket shared in PostgreSQL takes
 * that many in one statement with the same arithmetic (budgets/postgres/bucket.ts); the
 * arrival after them is max(arrival, now) + n * spacing.
 */
export function gcraTakeable(
  arrival: number,
  now: number,
  count: number,
  rules: GcraRules,
): number {
  const from = Math.max(arrival, now);
  if (Math.ceil(from - rules.toleranceMs) > now) return 0;
  const room = Math.floor((Math.floor(now) - from + rules.toleranceMs) / rules.spacingMs + EPSILON);
  return Math.min(count, Math.max(1, room + 1));
}

/** Spacings a rounding error may miss by: a token due this close to now is there. */
export const EPSILON = 1e-9;
