/** A call refused at once because too many already wait for a place. */
export class SlotsFull extends Error {
  constructor() {
    super("too many calls are waiting");
    this.name = "SlotsFull";
  }
}

/**
 * At most `limit` calls at once and at most `maxWaiting` waiting for a place, first come
 * first served. A burst of people the bot does not know yet then costs a bounded number of
 * `users.info` calls in flight and a bounded queue, whatever arrives; a call past the queue
 * is refused at once with SlotsFull, which its caller treats as a failed lookup.
 */
export class CallSlots {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  /**
   * @param limit calls in flight at once (>= 1)
   * @param maxWaiting calls that may wait for a place (>= 0)
   */
  constructor(
    private readonly limit: number,
    private readonly maxWaiting: number,
  ) {
    if (!(limit >= 1)) throw new RangeError(`limit must be >= 1, got ${limit}`);
    if (!(maxWaiting >= 0)) throw new RangeError(`maxWaiting must be >= 0, got ${maxWaiting}`);
  }

  async run<T>(call: () => Promise<T>): Promise<T> {
    if (this.running < this.limit) this.running++;
    else {
      if (this.waiting.length >= this.maxWaiting) throw new SlotsFull();
      // The call that finishes hands its place over, so none is taken in between.
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
    try {
      return await call();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }

  /** Calls in flight, and calls waiting for a place. */
  get load(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.length };
  }
}
