/**
 * Runs tasks one at a time per key, in the order they were added; different keys run
 * side by side. A failing task does not stop the ones after it.
 */
export class ConversationQueue {
  private readonly tails = new Map<string, Promise<void>>();
  private readonly counts = new Map<string, number>();

  get size(): number {
    return this.tails.size;
  }

  /** Tasks of this key added and not yet finished, the running one included. */
  pending(key: string): number {
    return this.counts.get(key) ?? 0;
  }

  add(key: string, task: () => Promise<void>): Promise<void> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    this.counts.set(key, this.pending(key) + 1);
    const next = previous
      .then(task)
      .catch(() => undefined)
      .finally(() => {
        const left = this.pending(key) - 1;
        if (left > 0) this.counts.set(key, left);
        else this.counts.delete(key);
      });
    this.tails.set(key, next);
    void next.then(() => {
      if (this.tails.get(key) === next) this.tails.delete(key);
    });
    return next;
  }

  /** Resolves when every task added so far has finished. */
  async idle(): Promise<void> {
    while (this.tails.size > 0) await Promise.all([...this.tails.values()]);
  }
}
