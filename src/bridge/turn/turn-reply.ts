import type { TurnStore } from "../../store/stores.js";
import type { Turn } from "../../store/turn.js";
import type { ReplyPhase, ReplyRenderer, ReplyStep, ReplyStrategy, ReplyView } from "../ports.js";

/** Steps kept per reply: a run that reports more shows its first ones (memory stays bounded). */
const MAX_STEPS = 100;

const sameStep = (a: ReplyStep, b: ReplyStep): boolean =>
  a.title === b.title && a.status === b.status && a.details === b.details;

/**
 * A turn's reply: the one object that owns what the person sees of a turn (its status, the
 * answer written so far, its notes, the steps of its run) and the Slack messages it is
 * shown in, recorded on the turn as they change. There is one per turn, shared by whoever
 * shows something (the queued placeholder, the runner, a stop); how it reaches Slack is the
 * strategy's business.
 */
export class TurnReply {
  private readonly renderer: ReplyRenderer;
  private readonly turnId: string;
  private phase: ReplyPhase = { kind: "starting" };
  private body = "";
  private notes: string[];
  /** The run's steps in the order they began; an update of a known id replaces it in place. */
  private steps: ReplyStep[] = [];
  /**
   * The phase the placeholder shows, as far as this process knows: undefined after a restart
   * (the placeholder may show anything), so a status-only edit is worth sending only then.
   */
  private displayed: ReplyPhase["kind"] | undefined;
  private opening: Promise<void> | undefined;
  /**
   * The first message's attempt, recorded as the reply opens: the record's round trip is made
   * while the run starts and the first words are awaited, not between them and the post.
   */
  private firstAttempt: Promise<void> | undefined;
  /** The turn had a placeholder before this process made the reply (a restart). */
  private readonly resumed: boolean;
  /** Settles once the reply stands in the thread (or can no longer come): see `shown`. */
  readonly shown: Promise<void>;
  private markShown: () => void = () => undefined;

  constructor(
    strategy: ReplyStrategy,
    private readonly turns: TurnStore,
    turn: Turn,
    private readonly onFirstText?: () => void,
    /** Resolves once what was recorded would survive a power cut (Stores.durable). */
    private readonly durable: () => Promise<void> = async () => undefined,
  ) {
    this.turnId = turn.id;
    this.notes = turn.notes;
    this.resumed = turn.replyParts.length > 0 || turn.replyPostsAttempted > 0;
    this.shown = new Promise((resolve) => {
      this.markShown = resolve;
    });
    // Only a message whose ts is recorded surely stands: one whose post was only attempted (by
    // a process that stopped before Slack answered, maybe another replica) may not exist, and
    // is looked for, or posted, when the reply opens; a turn behind it waits for that.
    if (turn.replyParts.length > 0) this.markShown();
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
        question: {
          user: turn.user,
          text: turn.content,
          startsThread: turn.messageTs === turn.threadTs,
        },
      },
      {
        parts: async (parts) => {
          await turns.recordReply(turn.id, parts);
        },
        posting: (part) => {
          const early = part === 0 ? this.firstAttempt : undefined;
          // A record ahead that failed (the database stalled) is tried again now.
          return early ? early.catch(() => this.recordAttempt(part)) : this.recordAttempt(part);
        },
      },
    );
  }

  private async recordAttempt(part: number): Promise<void> {
    await this.turns.recordReplyAttempt(this.turnId, part);
    await this.durable();
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
      if (!this.resumed) {
        this.displayed = phase.kind;
        this.firstAttempt = this.recordAttempt(0);
        // Its failure is the post's, when the post asks for it (and tries again).
        this.firstAttempt.catch(() => undefined);
      }
      this.opening = this.renderer.open(this.view());
      void this.opening.then(this.markShown, this.markShown);
    }
    return this.opening;
  }

  /** Settles once the answer's run may start (ReplyRenderer.near). */
  near(): Promise<void> {
    return this.renderer.near?.() ?? Promise.resolve();
  }

  /** The reply will never be shown by this process (the turn ended or was left): stop waiting on it. */
  abandon(): void {
    this.markShown();
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

  /**
   * Shows a step of the run as it began or changed. A step told again unchanged (a reopened
   * stream replays them) shows nothing new and is not sent.
   */
  step(step: ReplyStep): void {
    const at = this.steps.findIndex((known) => known.id === step.id);
    const before = this.steps[at];
    if (before && sameStep(before, step)) return;
    if (!before && this.steps.length >= MAX_STEPS) return;
    // A new array each time: a renderer may still hold the view it was given.
    this.steps = before
      ? this.steps.map((known, i) => (i === at ? { ...step } : known))
      : [...this.steps, { ...step }];
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
    try {
      await this.renderer.finish(this.view());
    } finally {
      this.markShown();
    }
  }

  private view(): ReplyView {
    return { body: this.body, phase: this.phase, notes: this.notes, steps: this.steps };
  }
}
