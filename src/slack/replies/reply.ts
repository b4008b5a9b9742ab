import type {
  ReplyRecorder,
  ReplyRenderer,
  ReplyStrategy,
  ReplyTarget,
  ReplyView,
} from "../../bridge/ports.js";
import type { Clock } from "../../time.js";
import type { Pacer } from "../calls/pacer.js";
import type { PostGate } from "../calls/post-gate.js";
import {
  type InterimSplit,
  keepsParts,
  splitFinal,
  splitInterim,
  splitInterimWithRoom,
} from "../render/answer-split.js";
import { buildReply, type ReplyPayload } from "../render/reply-blocks.js";
import { refusedTable } from "../render/table-block.js";
import { replyMark } from "../web-api/message-mark.js";
import { postOnce } from "../web-api/post-once.js";
import type { MarkedMessageQuery } from "../web-api/reply-lookup.js";
import { FirstWords } from "./first-words.js";
import { Openings } from "./openings.js";

/** The Web API calls a reply needs; the Bolt app's WebClient provides them. */
export interface ReplyClient {
  postMessage(args: { channel: string; thread_ts: string } & ReplyPayload): Promise<{ ts: string }>;
  deleteMessage(args: { channel: string; ts: string }): Promise<void>;
}

export interface PacedEditsOptions {
  /** The Web API of a workspace (its calls carry that workspace's bot token). */
  client: (team: string) => ReplyClient;
  pacer: Pick<Pacer<ReplyPayload>, "edit" | "owe">;
  postGate: PostGate;
  onError?: (error: unknown, what: string) => void;
  /**
   * Finds a reply message in its thread by its mark (turn id and part index: reply-lookup.ts),
   * for a post that may have reached Slack unrecorded: a retry, or a part an earlier process
   * was posting when it stopped.
   */
  findMessage: (where: MarkedMessageQuery & { team: string }) => Promise<string | undefined>;
  /**
   * How long a reply that is starting or working, with nothing to read yet, waits for its
   * first words before its first message is posted anyway, ms; default 0 (posted at once).
   * Where Slack's status line shows that the assistant is working, the first words then ride
   * on the first message instead of costing an edit from the workspace's shared budget.
   */
  firstWordsWaitMs?: number;
  /** The clock of that wait; required when `firstWordsWaitMs` is above 0. */
  clock?: Clock;
  /**
   * Posts ahead of a reply's first message in its channel's queue (the one going included)
   * beyond which the answer's run waits for it to come near (`near`): the service then writes
   * while the message comes, not long before anyone can read it. Undefined: never held.
   */
  holdRunBeyond?: number;
}

/**
 * The first reply strategy: each turn's reply as Slack messages, one placeholder edited
 * with `chat.update` through the workspace's pacer, and continuations for long answers.
 */
export class PacedEdits implements ReplyStrategy {
  private readonly openings = new Openings();

  constructor(private readonly options: PacedEditsOptions) {}

  render(target: ReplyTarget, recorder: ReplyRecorder): ReplyRenderer {
    return new PacedEditReply(target, recorder, this.options, this.openings);
  }

  /**
   * The final edit of an answer that Slack already shows whole in one streamed message (its
   * stream ended with the last words): the same words, without the Stop button, ranked behind
   * every edit that shows an answer's words (pacer.ts).
   */
  tidy(target: ReplyTarget, recorder: ReplyRecorder, view: ReplyView): Promise<void> {
    const reply = new PacedEditReply(target, recorder, this.options, this.openings, [view.body]);
    return reply.finish(view);
  }
}

/**
 * One turn's reply. Its messages are reconciled with the view by one serialized loop: earlier
 * parts of a long answer are finalized once they cannot change, the last part carries the
 * status and the Stop button, and only the newest view is ever sent (the pacer coalesces
 * edits). The answer is written a few characters at a time, so a view is laid out only when
 * something goes with it: the loop runs when a part may begin (or the view is the last), and
 * otherwise the last part's interim edit waits in the pacer and is made when it goes.
 */
class PacedEditReply implements ReplyRenderer {
  private readonly parts: string[];
  /** Parts below this index had a post sent by an earlier process: each is looked for first. */
  private readonly attemptedBefore: number;
  private readonly sent = new Map<number, string>();
  private latest: { view: ReplyView; final: boolean } | undefined;
  private loop: Promise<void> | undefined;
  private finalEdits: Promise<void>[] = [];
  /** The view last given, for the placeholder's post and the last part's interim edits. */
  private newest: ReplyView | undefined;
  /** The finished view was given: no interim edit is made any more. */
  private ended = false;
  /** The interim layout last made: its parts but the last are what Slack shows. */
  private laidOut: InterimSplit | undefined;
  /** The part whose interim edit waits in the pacer, to be made from the newest view. */
  private asked: number | undefined;
  /** The placeholder's post while it is on its way (or waits for the first words). */
  private opening: Promise<void> | undefined;
  private readonly firstWords: FirstWords;
  /** Settles when the first message is near enough for the run to start (see `near`). */
  private readonly nearing: Promise<void>;
  private reachNear: () => void = () => undefined;
  /** The final edit still to come is given (Pacer.owe). */
  private readonly payFinal: () => void;

  constructor(
    private readonly target: ReplyTarget,
    private readonly recorder: ReplyRecorder,
    private readonly options: PacedEditsOptions,
    private readonly openings: Openings,
    /**
     * The answer is shown whole already, in these parts: the final edits only tidy them
     * (PacedEdits.tidy), in the layout they have.
     */
    private readonly shown?: string[],
  ) {
    this.parts = [...target.parts];
    this.attemptedBefore = target.postsAttempted ?? target.parts.length;
    this.firstWords = new FirstWords(options.clock, options.firstWordsWaitMs ?? 0);
    this.nearing = new Promise((resolve) => {
      this.reachNear = resolve;
    });
    if (this.parts.length > 0) this.reachNear();
    // Its end will need an edit: interim edits leave the workspace's budget room for it.
    this.payFinal = shown ? () => undefined : options.pacer.owe(target.team);
  }

  async open(view: ReplyView): Promise<void> {
    if (this.parts.length > 0) return;
    this.opening = (async () => {
      const place = this.openings.join(`${this.target.team}/${this.target.channel}`);
      const beyond = this.options.holdRunBeyond;
      // Held, the run writes nothing until the message is near: no first words to wait for,
      // and its post queues behind those of the replies that opened before it.
      const held = beyond !== undefined && place.ahead > beyond;
      try {
        if (held) await place.after;
        else {
          this.reachNear();
          // First in its channel, the post goes once the first words are written: its budgets
          // are taken meanwhile. (Behind others it may wait longer than a take is kept.)
          if (place.ahead === 0) {
            this.options.postGate.expect({ team: this.target.team, channel: this.target.channel });
          }
          await this.firstWords.wait(this.newest ?? view);
        }
        // Made when the post goes: words written while it waited for its turn ride on it.
        const make = () => {
          const shown = this.newest ?? view;
          const body = shown.body === "" ? "" : (splitInterim(shown.body).at(-1) ?? "");
          return this.payload(shown, body, 0);
        };
        await this.post(0, make, { queued: place.queued, near: held ? beyond : undefined });
      } finally {
        place.leave();
      }
    })().finally(this.reachNear);
    await this.opening;
  }

  /**
   * Settles once the run may start: at once, unless more than `holdRunBeyond` first messages
   * of the channel's replies were still to be posted ahead of this one when it opened; then
   * once no more are ahead of it (or it is posted, or cannot be).
   */
  near(): Promise<void> {
    return this.nearing;
  }

  show(view: ReplyView): void {
    this.newest = view;
    this.firstWords.seen(view);
    const laid = this.laidOut;
    // Words that only grow the last part change only its edit, made when it goes (ask); where
    // a part may begin, the view is laid out now.
    if (!this.loop && laid && keepsParts(laid, view.body)) this.ask(view, laid);
    else {
      this.latest = { view, final: false };
      this.kick();
    }
  }

  async finish(view: ReplyView): Promise<void> {
    this.reachNear();
    this.latest = { view, final: true };
    this.newest = view;
    this.ended = true;
    this.firstWords.end();
    this.kick();
    try {
      await this.loop;
    } finally {
      // Given by now, or never to be.
      this.payFinal();
    }
    const edits = this.finalEdits;
    this.finalEdits = [];
    await Promise.all(edits);
  }

  private kick(): void {
    if (this.loop) return;
    this.loop = (async () => {
      // The first message being posted is where this shows: its post carries the newest view.
      await this.opening?.catch(() => undefined);
      while (this.latest) {
        const next = this.latest;
        this.latest = undefined;
        try {
          await this.sync(next.view, next.final);
        } catch (error) {
          if (next.final) {
            this.loop = undefined;
            throw error;
          }
          this.options.onError?.(error, "interim reply update");
        }
      }
      this.loop = undefined;
    })();
    this.loop.catch(() => undefined);
  }

  private async sync(view: ReplyView, final: boolean): Promise<void> {
    // The final layout shows tables as table blocks, each ending its message (splitFinal);
    // while the answer is written they are text.
    const laid = final ? undefined : splitInterimWithRoom(view.body);
    const bodies = laid?.parts ?? this.shown ?? splitFinal(view.body);
    for (let i = 0; i < bodies.length; i++) {
      const make = () => this.partPayload(view, bodies, i, final);
      const asText = () => this.partPayload(view, bodies, i, false);
      let payload: ReplyPayload | undefined;
      // A part found already in Slack shows what it was posted with: it is edited below.
      if (this.parts[i] === undefined) {
        payload = await this.orAsText(make(), asText, async (p) => {
          await this.post(i, p);
          return p;
        });
      }
      // The last part's interim edit is made when it goes (ask, below).
      if (laid && i === bodies.length - 1) break;
      payload ??= make();
      const key = JSON.stringify(payload);
      if (this.sent.get(i) === key) continue;
      this.sent.set(i, key);
      // A part edited here is settled (or final): it replaces an interim edit that waits.
      if (this.asked === i) this.asked = undefined;
      const at = this.at(i);
      const tidy = this.shown !== undefined;
      this.finalEdits.push(
        this.orAsText(payload, asText, (p) =>
          this.options.pacer.edit(at, p, { final: true, tidy }),
        ),
      );
    }
    if (laid) {
      this.laidOut = laid;
      this.ask(view, laid);
    }
    // The final edits are the pacer's now: interim edits no longer leave room for them.
    if (final) this.payFinal();
    if (final && this.parts.length > bodies.length) {
      // The stream showed more parts than the final answer has: remove the extra ones.
      const extra = this.parts.splice(bodies.length);
      await this.recorder.parts([...this.parts]);
      for (const ts of extra) {
        await this.options
          .client(this.target.team)
          .deleteMessage({ channel: this.target.channel, ts })
          .catch((error: unknown) => this.options.onError?.(error, "delete extra part"));
      }
    }
  }

  /**
   * Has the last part's interim edit wait in the pacer, its payload made from the newest view
   * when it goes (interimPayload), unless one waits already, or the view has the words laid
   * out and shows what was sent.
   */
  private ask(view: ReplyView, laid: InterimSplit): void {
    const i = laid.parts.length - 1;
    if (this.asked === i) return;
    if (view.body === laid.text) {
      const payload = this.partPayload(view, laid.parts, i, false);
      if (this.sent.get(i) === JSON.stringify(payload)) return;
    }
    this.asked = i;
    this.options.pacer
      .edit(this.at(i), () => this.interimPayload(i))
      .catch((error: unknown) => this.options.onError?.(error, "interim edit"));
  }

  /**
   * Part `i`'s interim payload from the newest view, as its edit goes; undefined when it shows
   * what was sent, or when the newest words change more than that part (a part begins, or the
   * answer was written anew): the loop lays those out.
   */
  private interimPayload(i: number): ReplyPayload | undefined {
    if (this.asked === i) this.asked = undefined;
    const view = this.newest;
    const shown = this.laidOut;
    if (this.ended || !view || !shown) return undefined;
    const laid = splitInterimWithRoom(view.body);
    const { parts } = laid;
    const onlyLast =
      parts.length === i + 1 && parts.every((part, j) => j === i || part === shown.parts[j]);
    if (!onlyLast) {
      this.latest = { view, final: false };
      this.kick();
      return undefined;
    }
    this.laidOut = laid;
    const payload = this.partPayload(view, parts, i, false);
    const key = JSON.stringify(payload);
    if (this.sent.get(i) === key) return undefined;
    this.sent.set(i, key);
    return payload;
  }

  private at(i: number) {
    return { team: this.target.team, channel: this.target.channel, ts: this.parts[i] as string };
  }

  /**
   * Sends `payload`; should Slack refuse its table block (`invalid_blocks`: Slack reads the
   * block more narrowly than its reference), sends the same part with its table as text, so
   * that the answer still ends whole.
   */
  private async orAsText<T>(
    payload: ReplyPayload,
    asText: () => ReplyPayload,
    send: (payload: ReplyPayload) => Promise<T>,
  ): Promise<T> {
    try {
      return await send(payload);
    } catch (error) {
      if (!refusedTable(error, payload)) throw error;
      this.options.onError?.(error, "a table block Slack refused, shown as text");
      return send(asText());
    }
  }

  /** Part `i` of `bodies`: a finished earlier part, or the last with the view's status. */
  private partPayload(view: ReplyView, bodies: string[], i: number, tables: boolean) {
    if (i === bodies.length - 1) return this.payload(view, bodies[i] ?? "", i, tables);
    return buildReply({
      body: bodies[i] ?? "",
      phase: { kind: "continued" },
      turnId: this.target.turnId,
      part: { index: i },
      tables,
    });
  }

  /** The last part's payload: the status line (and Stop button) go with it. */
  private payload(view: ReplyView, body: string, index: number, tables = false): ReplyPayload {
    return buildReply({
      tables,
      body,
      phase: view.phase,
      turnId: this.target.turnId,
      notes: view.notes,
      steps: view.steps,
      part: { index },
    });
  }

  /**
   * Posts part `index` (the next one) once. The attempt is recorded before the post, and
   * the post looks for the part's mark in the thread first on any retry, or when an earlier
   * process recorded an attempt: a crash or a lost answer between Slack taking the part and
   * its ts being recorded then continues in that message rather than posting a second.
   */
  private async post(
    index: number,
    make: ReplyPayload | (() => ReplyPayload),
    first?: { queued: () => void; near: number | undefined },
  ): Promise<void> {
    const { channel, threadTs, team } = this.target;
    const mayExist = index < this.attemptedBefore;
    let payload: ReplyPayload | undefined;
    const { postGate, client, findMessage, onError } = this.options;
    const posting = postOnce(
      { team, channel },
      {
        postGate,
        mayExist,
        ...(!mayExist && { recorded: this.recorder.posting(index) }),
        post: () => {
          payload = typeof make === "function" ? make() : make;
          return client(team).postMessage({ channel, thread_ts: threadTs, ...payload });
        },
        find: () =>
          findMessage({ team, channel, threadTs, mark: replyMark(this.target.turnId, index) }),
        onLookupRefused: (error) => onError?.(error, "look for a reply message"),
        ...(first?.near !== undefined && {
          nearing: { within: first.near, reached: this.reachNear },
        }),
      },
    );
    first?.queued();
    const result = await posting;
    if (!result.found && payload) this.sent.set(index, JSON.stringify(payload));
    this.parts.push(result.ts);
    await this.recorder.parts([...this.parts]);
  }
}
