import type { Clock } from "../time.js";
import type { FeedbackStore, TurnStore } from "./stores.js";

/**
 * How long the bot keeps what people wrote. A finished turn's texts (the question, the text
 * posted to the service, its notes and the run's error) are needed only until the answer
 * ends; they are kept `retentionMs` longer for an operator looking into a complaint, then
 * purged. The turn's row stays, without texts: it is what recognises a Slack retry (or a
 * Socket Mode redelivery) of that message as a duplicate, so an old question is never
 * answered a second time, and what tells a later thread context which thread messages
 * reached the service as questions of their own. Ids, ts and states are no one's words.
 *
 * Feedback (who pressed which feedback button on which answer) is a person's opinion under
 * their name: it is deleted `retentionMs` after the press. By then the question it judged is
 * purged, so it could no longer be looked into; the counts stay in /metrics.
 */
export interface RetentionOptions {
  turns: Pick<TurnStore, "purgeTexts">;
  /** Feedback presses, deleted when older than the retention; default none to sweep. */
  feedback?: Pick<FeedbackStore, "purge">;
  /** How long a finished turn's texts are kept after it finished, ms (RETENTION_DAYS). */
  retentionMs: number;
  clock: Clock;
  logger: { info(obj: object, msg?: string): void; error(obj: object, msg?: string): void };
  /** Time between sweeps, ms; default 1 hour (the retention is counted in days). */
  intervalMs?: number;
  /**
   * Turns purged per statement, default 500: a first sweep over a long history runs in short
   * steps, with Slack's events and the answers being written going on between them.
   */
  batchSize?: number;
}

/** Sweeps at start and then every interval on the clock, until stopped. */
export class Retention {
  private readonly intervalMs: number;
  private readonly batchSize: number;
  private cancelTimer: (() => void) | undefined;
  private sweeping: Promise<number> | undefined;
  private stopped = false;

  constructor(private readonly options: RetentionOptions) {
    this.intervalMs = options.intervalMs ?? 3_600_000;
    this.batchSize = options.batchSize ?? 500;
  }

  /** Runs the first sweep and schedules the next; resolves with how many turns it purged. */
  start(): Promise<number> {
    this.stopped = false;
    return this.sweepThenWait();
  }

  /** No sweep after this; waits for one under way, so the store can be closed afterwards. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    await this.sweeping;
  }

  private async sweepThenWait(): Promise<number> {
    this.sweeping = this.sweep();
    const purged = await this.sweeping;
    if (!this.stopped) {
      this.cancelTimer = this.options.clock.timer(this.intervalMs, () => {
        void this.sweepThenWait();
      });
    }
    return purged;
  }

  /**
   * Purges every turn past the retention, then every feedback press, a batch at a time;
   * resolves with the turns purged; never throws.
   */
  private async sweep(): Promise<number> {
    const { turns, feedback, clock, retentionMs, logger } = this.options;
    const finishedBefore = clock.now() - retentionMs;
    const purged = await this.inBatches(
      (limit) => turns.purgeTexts(finishedBefore, limit),
      "could not purge the texts of old turns",
    );
    if (purged > 0) {
      logger.info({ purged, finishedBefore }, "purged the texts of turns past their retention");
    }
    if (feedback) {
      const deleted = await this.inBatches(
        (limit) => feedback.purge(finishedBefore, limit),
        "could not delete old feedback",
      );
      if (deleted > 0) {
        logger.info({ feedback: deleted, pressedBefore: finishedBefore }, "deleted old feedback");
      }
    }
    return purged;
  }

  /** Runs `purge` a batch at a time until a batch comes back short; how many it purged. */
  private async inBatches(
    purge: (limit: number) => Promise<number>,
    failure: string,
  ): Promise<number> {
    let purged = 0;
    try {
      for (;;) {
        const count = await purge(this.batchSize);
        purged += count;
        if (count < this.batchSize || this.stopped) break;
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    } catch (error) {
      // The next sweep tries again; a database in trouble shows in /readyz.
      const err = error instanceof Error ? error.message : String(error);
      this.options.logger.error({ err }, failure);
    }
    return purged;
  }
}
