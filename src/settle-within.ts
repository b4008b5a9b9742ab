/** How a piece of work stands after a bounded wait; it goes on either way. */
export type Settled<T> =
  | { state: "fulfilled"; value: T }
  | { state: "rejected"; error: unknown }
  | { state: "pending" };

/**
 * Waits for `work` at most `ms` and says how it stands. Never rejects: a failure is a
 * state, so callers that only need a bounded wait can ignore the result.
 */
export async function settleWithin<T>(work: Promise<T>, ms: number): Promise<Settled<T>> {
  let timer: NodeJS.Timeout | undefined;
  const pending = new Promise<Settled<T>>((resolve) => {
    timer = setTimeout(() => resolve({ state: "pending" }), ms);
  });
  try {
    return await Promise.race([
      work.then(
        (value): Settled<T> => ({ state: "fulfilled", value }),
        (error: unknown): Settled<T> => ({ state: "rejected", error }),
      ),
      pending,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
