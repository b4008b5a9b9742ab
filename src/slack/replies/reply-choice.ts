import type {
  ReplyRecorder,
  ReplyRenderer,
  ReplyStrategy,
  ReplyTarget,
  ReplyView,
} from "../../bridge/ports.js";
import type { Allowance } from "../../budgets/allowance.js";
import { SlidingWindow } from "../../budgets/sliding-window.js";
import { SLACK_MINUTE_MS } from "../../budgets/window.js";
import type { Clock } from "../../time.js";
import { START, STOP } from "../calls/stream-gate.js";
import type { NativeStream } from "./native-stream.js";

type Way = "stream" | "edits";

/** What the choice reads of the scheduler: how long a method's next call would wait, ms. */
export interface Budgets {
  waitFor(team: string, method: string): number;
}

export interface ReplyChoiceOptions {
  /** Paced `chat.update` edits: every reply that does not stream, and every reply's end. */
  edits: ReplyStrategy;
  /** Native streaming; undefined: every reply is edited (SLACK_STREAMING=off). */
  native: NativeStream | undefined;
  budgets: Budgets;
  /**
   * The streams the stream gate may start in any minute (SLACK_STREAM_STARTS_PER_MINUTE), and
   * the clock to count them by: a stream is counted when it is chosen, since its start may wait
   * a moment for the first words and spend the budget only then. Without them, only the
   * budgets are read. `window`: where a workspace's choices are counted; default this
   * process's memory. Replicas count them where they share their budgets, so that together
   * they choose no more streams than the minute starts.
   */
  starts?: { perMinute: number; clock: Clock; window?: (team: string) => Allowance };
  /**
   * Longest wait for `chat.startStream` (and `chat.stopStream`) budget that still streams,
   * ms; default 1_000: past it the placeholder would not appear at once.
   */
  maxStartWaitMs?: number;
  /** Told which way each answer goes (metrics, logs). */
  onChosen?: (target: ReplyTarget, way: Way) => void;
}

/**
 * The reply strategy the bridge is given: per answer, native streaming or paced edits,
 * whichever the workspace's budgets serve best at the moment the answer opens.
 *
 * An answer streams when Slack lets the bot stream there and its start and stop can go now
 * (Tier 2, a minute's allowance): a stream shows its words through appends (Tier 4, twice
 * the edits' Tier 3 and a budget of their own), so every answer the start window has room
 * for streams, and the edits carry the rest. A reply waiting behind another in its thread is
 * edited (its placeholder may wait for long: a stream would expire), and so is a reply
 * resumed after a restart.
 */
export class ReplyChoice implements ReplyStrategy {
  /** Workspaces, and channels (`team/channel`), where Slack refused to stream. */
  private readonly refused = new Set<string>();
  /** Per workspace, the streams chosen within the last minute. */
  private readonly chosen = new Map<string, Allowance>();

  constructor(private readonly options: ReplyChoiceOptions) {}

  render(target: ReplyTarget, recorder: ReplyRecorder): ReplyRenderer {
    return new ChosenReply(target, recorder, this);
  }

  /** Slack refused a stream: not in this channel again, or (a missing method or scope) anywhere in the workspace. */
  refuse(target: ReplyTarget, reason: string): void {
    const where = reason === "channel_type_not_supported" ? target.channel : "";
    this.refused.add(`${target.team}/${where}`);
  }

  /** The way of a reply about to show `view` (undefined: it ends without having opened). */
  async choose(target: ReplyTarget, recorder: ReplyRecorder, view: ReplyView | undefined) {
    const { native, edits } = this.options;
    const resumed = target.parts.length > 0 || (target.postsAttempted ?? 0) > 0;
    const way: Way =
      native && view && !resumed && (await this.streams(target, view)) ? "stream" : "edits";
    this.options.onChosen?.(target, way);
    if (way === "stream") return (native as NativeStream).render(target, recorder);
    return native && resumed ? native.resume(target, recorder) : edits.render(target, recorder);
  }

  private async streams(target: ReplyTarget, view: ReplyView): Promise<boolean> {
    const { team, channel } = target;
    if (!target.asker || view.phase.kind === "queued") return false;
    if (this.refused.has(`${team}/`) || this.refused.has(`${team}/${channel}`)) return false;
    const { budgets, maxStartWaitMs = 1_000 } = this.options;
    if (budgets.waitFor(team, START) > maxStartWaitMs) return false;
    if (budgets.waitFor(team, STOP) > maxStartWaitMs) return false;
    return this.reserveStart(team);
  }

  /** Counts a stream's start against the minute's, when it still has room. */
  private async reserveStart(team: string): Promise<boolean> {
    const { starts } = this.options;
    if (!starts) return true;
    let window = this.chosen.get(team);
    if (!window) {
      window = starts.window?.(team) ?? new SlidingWindow(starts.perMinute, SLACK_MINUTE_MS);
      this.chosen.set(team, window);
    }
    const now = starts.clock.now();
    return window.takeNow ? await window.takeNow(now) : window.tryTake(now);
  }
}

/** One answer's reply: the way is chosen when it first shows something, then kept. */
class ChosenReply implements ReplyRenderer {
  private chosen: ReturnType<ReplyChoice["choose"]> | undefined;

  constructor(
    private readonly target: ReplyTarget,
    private readonly recorder: ReplyRecorder,
    private readonly choice: ReplyChoice,
  ) {}

  async open(view: ReplyView): Promise<void> {
    await (await this.way(view)).open(view);
  }

  show(view: ReplyView): void {
    void this.way(view).then((renderer) => renderer.show(view));
  }

  async finish(view: ReplyView): Promise<void> {
    await (await this.way(undefined)).finish(view);
  }

  /** As the chosen way says; at once before one is chosen, or when choosing failed. */
  async near(): Promise<void> {
    const renderer = await this.chosen?.catch(() => undefined);
    await renderer?.near?.();
  }

  private way(view: ReplyView | undefined): ReturnType<ReplyChoice["choose"]> {
    this.chosen ??= this.choice.choose(this.target, this.recorder, view);
    return this.chosen;
  }
}
