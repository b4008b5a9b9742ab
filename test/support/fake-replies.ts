import type {
  ReplyRecorder,
  ReplyRenderer,
  ReplyStrategy,
  ReplyTarget,
  ReplyView,
} from "../../src/bridge/ports.js";
import { TurnLife } from "../../src/bridge/turn/turn-life.js";
import { TurnReply } from "../../src/bridge/turn/turn-reply.js";
import type { TurnStore } from "../../src/store/stores.js";
import type { Turn } from "../../src/store/turn.js";

/** What a fake reply was asked to show, in order. */
export type ReplyCall = { turnId: string; call: "open" | "show" | "finish"; view: ReplyView };

/**
 * A reply strategy that keeps every view it is given instead of calling Slack: opening
 * "posts" a placeholder with a made-up ts (recorded as Slack's reply would be).
 */
export class FakeReplies implements ReplyStrategy {
  readonly calls: ReplyCall[] = [];
  /** Slack refuses every ending (a permanent error on the final edit). */
  failFinish = false;
  /** Held open calls: each resolves when the test calls `release`. */
  holdOpens = false;
  /** Slack refuses the reply's first message (once any hold is released). */
  failOpen: Error | undefined;
  /** Replies' first messages are not near (`near` waits) until the test calls `nearNow`. */
  holdRuns = false;
  private held: (() => void)[] = [];
  private readonly far: (() => void)[] = [];

  render(target: ReplyTarget, recorder: ReplyRecorder): ReplyRenderer {
    const parts = [...target.parts];
    return {
      open: async (view) => {
        this.calls.push({ turnId: target.turnId, call: "open", view });
        if (parts.length > 0) return;
        await recorder.posting(0);
        if (this.holdOpens) await new Promise<void>((resolve) => this.held.push(resolve));
        if (this.failOpen) throw this.failOpen;
        parts.push(`reply-${target.turnId}`);
        await recorder.parts([...parts]);
      },
      show: (view) => {
        this.calls.push({ turnId: target.turnId, call: "show", view });
      },
      finish: async (view) => {
        this.calls.push({ turnId: target.turnId, call: "finish", view });
        if (this.failFinish) throw new Error("message_not_found");
      },
      near: () =>
        this.holdRuns ? new Promise<void>((resolve) => this.far.push(resolve)) : Promise.resolve(),
    };
  }

  /** Every reply's first message is near now: their runs may start. */
  nearNow(): void {
    for (const go of this.far.splice(0)) go();
  }

  /** Lets every held open go on. */
  release(): void {
    for (const go of this.held.splice(0)) go();
  }

  /** The calls for one turn, as `call:phase[:body]` lines, easy to compare. */
  story(turnId: string): string[] {
    return this.calls
      .filter((c) => c.turnId === turnId)
      .map((c) => {
        const phase = c.view.phase;
        const detail =
          phase.kind === "queued" ? `${phase.kind}(${phase.where} ${phase.ahead})` : phase.kind;
        return c.view.body ? `${c.call}:${detail}:${c.view.body}` : `${c.call}:${detail}`;
      });
  }
}

/** A turn's life with a reply on `replies`, as the bridge makes one. */
export function turnLife(replies: ReplyStrategy, turns: TurnStore, turn: Turn): TurnLife {
  return new TurnLife(turn, new TurnReply(replies, turns, turn));
}
