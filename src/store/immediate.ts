/**
 * A store interface as an implementation that answers at once (memory, better-sqlite3, the
 * synchronous PostgreSQL client) writes it: each method's result itself, not a promise.
 */
export type Immediate<T> = {
  [K in keyof T]: T[K] extends (...args: infer A) => Promise<infer R> ? (...args: A) => R : T[K];
};

/**
 * A store that answers at once, behind its asynchronous interface: every answer, and every
 * failure, comes as a promise (a failure is never thrown at the caller before it awaits).
 * The call still runs when it is made: its effect is in the store before the promise settles.
 */
export function promised<T extends object>(store: Immediate<T>): T {
  return new Proxy(store, {
    get(target, name, receiver) {
      const value: unknown = Reflect.get(target, name, receiver);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        try {
          return Promise.resolve(value.apply(target, args));
        } catch (error) {
          return Promise.reject(error);
        }
      };
    },
  }) as unknown as T;
}
