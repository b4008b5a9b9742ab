import type { Allowance } from "../../budgets/allowance.js";
import {
  type EditPayload,
  type EditSender,
  EditSlot,
  type EditTarget,
  PacerError,
  type SlotRules,
} from "./edit-slot.js";
import { CallScheduler, type Lanes } from "./scheduler.js";

export { type EditPayload, type EditSender, type EditTarget, PacerError } from "./edit-slot.js";

const METHOD = "chat.update";

export interface PacerOptions {
  /**
   * The scheduler the edits go through, shared with the post gate; default one of the
   * pacer's own, on the system clock.
   */
  scheduler?: CallScheduler;
  /**
   * Edits in any minute per workspace; default 47. Slack's `chat.update` is Tier 3 ("50+ per
   * minute … sporadic bursts are welcome"), shared by every reply in the workspace: the
   * minute's allowance may go at once, as Slack publishes it (sliding-window.ts).
   */
  updatesPerMinute?: number;
  /**
   * A token bucket of this capacity instead of the window: at most `burst` edits back to back,
   * then `updatesPerMinute` spread evenly over the minute. Unset: the window.
   */
  burst?: number;
  /** Least time between a message's interim edits, from one send start, ms; default 1_000. */
  messageIntervalMs?: number;
  /** Retries of a final edit after a non-429 transient error (5xx, network); default 5. */
  finalRetries?: number;
  /**
   * Ceiling of the first (jittered, exponential) backoff between those retries, ms; default
   * 1_000 (capped at 30 s).
   */
  retryDelayMs?: number;
  /**
   * How long a message with nothing to send is remembered (its last send, its final having
   * landed), ms; default 600_000.
   */
  idleRetentionMs?: number;
  /** Metrics hook: Slack answered 429 for this edit; its workspace pauses for retryAfterMs. */
  onRateLimited?: (target: EditTarget, retryAfterMs: number) => void;
  /** Metrics hook: an edit landed. */
  onSent?: (target: EditTarget, final: boolean) => void;
}

/**
 * The `chat.update` policy on the call scheduler: each workspace's Tier 3 budget shared by
 * every message the bot edits.
 *
 * Per message one slot holding the latest payload (or what makes it when the edit goes), at
 * most one edit in flight, interim edits at most one per `messageIntervalMs`. When a token is
 * free, final edits go first (oldest first), then interim edits of the message least recently
 * edited (so fifty streaming replies take turns), then tidy finals; interim and tidy edits keep
 * to a pace of half the minute, so that an answer's end never waits for the window. A 429
 * pauses only its workspace's edits.
 *
 * Promises: an edit resolves when it or a newer edit of the same message lands (an edit whose
 * maker makes nothing lands unsent: the message shows that already). A final edit rejects when
 * it fails for good (a permanent Slack error, or transient errors beyond `finalRetries`). An
 * interim edit is never retried: when it fails, its promise waits for the next edit of the
 * message to land, and rejects if that is a final that fails for good, or on `forget()`,
 * `close()` or `idleRetentionMs` without edits (PacerError). Interim edits given after a final
 * are ignored: they follow the final while it is on its way, resolve at once after.
 */
export class Pacer<P> {
  private readonly rules: SlotRules<P>;
  private readonly scheduler: CallScheduler;
  private readonly slots: Lanes<EditSlot<P>>;
  private readonly interimPaces = new Map<string, Allowance>();
  /** Per workspace, the messages whose final edit is still to come (`owe`). */
  private readonly owed = new Map<string, number>();

  constructor(send: EditSender<P>, options: PacerOptions = {}) {
    const perMinute = options.updatesPerMinute ?? 47;
    this.rules = {
      send,
      messageIntervalMs: options.messageIntervalMs ?? 1_000,
      interimPace:
        options.burst === undefined ? (team) => this.interimPace(team, perMinute) : undefined,
      // A bucket's next token goes to a final first anyway; a minute's window spent at once
      // would hold an answer's end back until it moves on.
      roomAt:
        options.burst === undefined
          ? (team, now) => this.scheduler.readyAfter(team, METHOD, this.owed.get(team) ?? 0, now)
          : undefined,
      finalRetries: options.finalRetries ?? 5,
      idleRetentionMs: options.idleRetentionMs ?? 600_000,
      onSent: options.onSent,
    };
    this.scheduler = options.scheduler ?? new CallScheduler();
    const onRateLimited = options.onRateLimited;
    this.slots = this.scheduler.register<EditSlot<P>>(METHOD, {
      perMinute,
      burst: options.burst ?? 1,
      window: options.burst === undefined,
      pauses: "method",
      retryDelayMs: options.retryDelayMs ?? 1_000,
      ...(onRateLimited && { onRateLimited: (slot, ms) => onRateLimited(slot.target, ms) }),
    });
  }

  /**
   * The pace of a workspace's interim and tidy edits: half the minute, an eighth of it at once.
   * A window spent on interim edits at once would hold every answer's end back until it moved
   * on; paced, they leave finals at least half of it, and a share that comes back every few
   * seconds. Kept where the scheduler keeps the workspace's budgets, so that replicas' interim
   * edits together keep to it too.
   */
  private interimPace(team: string, perMinute: number): Allowance {
    let pace = this.interimPaces.get(team);
    if (!pace) {
      pace = this.scheduler.allowance(
        { team, method: METHOD, lane: "interim" },
        {
          perMinute: Math.max(1, Math.floor(perMinute / 2)),
          burst: Math.max(1, Math.floor(perMinute / 8)),
        },
      );
      this.interimPaces.set(team, pace);
    }
    return pace;
  }

  /**
   * Wants `payload` shown in the message: the payload, or a maker called when the edit goes
   * (EditPayload). `final`: the message's last edit, sent before any interim edit; with
   * `tidy`, one that shows no words a person waits for (the answer is whole already): it goes
   * after every other edit.
   */
  edit(
    target: EditTarget,
    payload: EditPayload<P>,
    options?: { final?: boolean; tidy?: boolean },
  ): Promise<void> {
    if (this.slots.closed) return Promise.reject(new PacerError("closed"));
    const now = this.scheduler.clock.now();
    const { team, channel, ts } = target;
    const key = keyOf(target);
    const slot = this.slots.get(
      team,
      key,
      () => new EditSlot<P>({ team, channel, ts }, this.rules, now),
    );
    return new Promise<void>((resolve, reject) => {
      const kind = options?.final ? (options.tidy ? "tidy" : "final") : "interim";
      const fresh = slot.give(payload, kind, { resolve, reject }, now);
      if (fresh) this.slots.wake(team, key);
    });
  }

  /**
   * A message of workspace `team` will need a final edit (an answer's end): until the function
   * returned is called (its final given, or no longer to come), interim and tidy edits leave
   * the workspace's budget one edit for it. Without that, the interim edits of many answers
   * being written could spend the minute that their ends then wait for.
   */
  owe(team: string): () => void {
    this.owed.set(team, (this.owed.get(team) ?? 0) + 1);
    let paid = false;
    return () => {
      if (paid) return;
      paid = true;
      const left = (this.owed.get(team) ?? 1) - 1;
      if (left > 0) this.owed.set(team, left);
      else this.owed.delete(team);
      // Interim edits held back for it may go now.
      this.slots.wake(team);
    };
  }

  forget(target: EditTarget): void {
    const key = keyOf(target);
    const slot = this.slots.find(target.team, key);
    if (!slot) return;
    slot.forget();
    this.slots.wake(target.team, key);
  }

  stats(): { pending: number; inFlight: number; sent: number; rateLimited: number } {
    const slots = this.slots.all();
    const { landed, rateLimited } = this.slots.counts();
    return {
      pending: slots.filter((s) => s.hasPending).length,
      inFlight: slots.filter((s) => s.isInFlight).length,
      sent: landed,
      rateLimited,
    };
  }

  /** Pending edits reject; an edit in flight still settles. */
  close(): void {
    this.slots.close();
  }
}

function keyOf(target: EditTarget): string {
  return `${target.channel}\u0000${target.ts}`;
}
