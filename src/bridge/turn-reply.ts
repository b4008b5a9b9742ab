import type { TurnStore } from "../store/stores.js";
import type { Turn } from "../store/turn.js";
import type { ReplyPhase, ReplyRenderer, ReplyStrategy, ReplyView } from "./ports.js";

/**
 * A turn's reply: the one object that owns what the person sees of a turn (its status, the
 * answer written so far, its notes) and the Slack messages it is shown in, recorded on the
 * turn as they change. There is one per turn, shared by whoever shows something (the
 * queued placeholder, the runner, a stop); how it reaches Slack is the strategy's business.
 */
export class TurnReply {
  private readonly renderer: ReplyRenderer;
  private phase: ReplyPhase = { kind: "starting" };
  private body = "";
  private notes: string[];
  /**
   * The phase the placeholder shows, as far as this process knows: undefined after a restart
   * (the placeholder may show anything), so a status-only edit is worth sending only then.
   */
  private displayed: ReplyPhase["kind"] | undefined;
  private opening: Promise<void> | undefined;
  /** The turn had a placeholder before this process made the reply (a restart). */
  private readonly resumed: boolean;

  constructor(
    strategy: ReplyStrategy,
    turns: TurnStore,
    turn: Turn,
    private readonly onFirstText?: () => void,
  ) {
    this.notes = turn.notes;
    this.resumed = turn.replyParts.length > 0 || turn.replyPostsAttempted > 0;
    this.renderer = strategy.render(
      {
        turnId: turn.id,
        team: turn.team,
        channel: turn.channel,
        threadTs: turn.threadTs,
        asker: turn.user,
        askedTs: turn.messageTs,
        parts: turn.replyParts,
        postsAttempted: turn.replyPostsAttempted,
      },
      {
        parts: (parts) => turns.recordReply(turn.id, parts),
        posting: (part) => turns.recordReplyAttempt(turn.id, part),
      },
    );
  }

  /** The answer's text shown so far. */
  get text(): string {
    return this.body;
  }

  /**
   * Makes the reply visible (the placeholder, once per turn, whoever asks first) showing
   * `phase`; resolves when it is. A turn whose placeholder exists keeps it.
   */
  open(phase: ReplyPhase): Promise<void> {
    if (!this.opening) {
      this.phase = phase;
      if (!this.resumed) this.displayed = phase.kind;
      this.opening = this.renderer.open(this.view());
    }
    return this.opening;
  }

  /** Shows a new status above the text so far (`working` is skipped where it says nothing new). */
  status(phase: ReplyPhase): void {
    this.phase = phase;
    const says = this.displayed;
    if (phase.kind === "working" && (says === "starting" || says === "working")) return;
    this.displayed = phase.kind;
    this.renderer.show(this.view());
  }

  /** Shows the answer written so far. */
  write(text: string): void {
    if (this.body === "" && text !== "") this.onFirstText?.();
    this.body = text;
    this.phase = { kind: "working" };
    this.displayed = "working";
    this.renderer.show(this.view());
  }

  /** Replaces the notes under the reply (the turn's, once its content is composed). */
  setNotes(notes: string[]): void {
    this.notes = notes;
  }

  /** The end state, with the complete answer; resolves once Slack shows it. */
  async finish(phase: ReplyPhase, body: string): Promise<void> {
    // A placeholder still being posted is where the end is shown, not a second message.
    await this.opening?.catch(() => undefined);
    this.phase = phase;
    this.body = body;
    this.displayed = phase.kind;
    await this.renderer.finish(this.view());
  }

  private view(): ReplyView {
    return { body: this.body, phase: this.phase, notes: this.notes };
  }
}
