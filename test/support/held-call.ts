/**
 * The next call of `object`'s method `name` waits until `release` (or fails with `fail`);
 * `entered` resolves when it is made. Calls after it go through at once.
 */
export function heldCall<T extends object, K extends keyof T>(object: T, name: K) {
  const original = object[name] as (...args: unknown[]) => Promise<unknown>;
  let entered = () => {};
  const reached = new Promise<void>((resolve) => {
    entered = resolve;
  });
  let settle: (failure?: Error) => void = () => {};
  const gate = new Promise<Error | undefined>((resolve) => {
    settle = resolve;
  });
  const held = async (...args: unknown[]) => {
    object[name] = original as T[K];
    entered();
    const failure = await gate;
    if (failure) throw failure;
    return original.apply(object, args);
  };
  object[name] = held as T[K];
  return { entered: reached, release: () => settle(), fail: (error: Error) => settle(error) };
}
