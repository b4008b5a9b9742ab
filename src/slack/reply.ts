import type {
  ReplyRecorder,
  ReplyRenderer,
  ReplyStrategy,
  ReplyTarget,
  ReplyView,
} from "../bridge/ports.js";
import { splitAnswer, splitInterim } from "./answer-split.js";
import type { Pacer } from "./pacer.js";
import type { PostGate } from "./post-gate.js";
import { buildReply, type ReplyPayload } from "./reply-blocks.js";

/** The Web API calls a reply needs; the Bolt app's WebClient provides them. */
export interface ReplyClient {
  postMessage(args: { channel: string; thread_ts: string } & ReplyPayload): Promise<{ ts: string }>;
  deleteMessage(args: { channel: string; ts: string }): Promise<void>;
}

export interface PacedEditsOptions {
  client: ReplyClient;
  pacer: Pacer<ReplyPayload>;
  postGate: PostGate;
  onError?: (error: unknown, what: string) => void;
  /**
   * Finds the turn's placeholder in its thread (the message whose Stop button carries the
   * turn id), for a turn whose first post may have reached Slack unrecorded.
   */
  findReply?: (where: {
    channel: string;
    threadTs: string;
    turnId: string;
  }) => Promise<string | undefined>;
}

/**
 * The first reply strategy: each turn's reply as Slack messages, one placeholder edited
 * with `chat.update` through the workspace's pacer, and continuations for long answers.
 */
export class PacedEdits implements ReplyStrategy {
  constructor(private readonly options: PacedEditsOptions) {}

  render(target: ReplyTarget, recorder: ReplyRecorder): ReplyRenderer {
    return new PacedEditReply(target, recorder, this.options);
  }
}

/**
 * One turn's reply. Every change of the view is reconciled with the messages in Slack by
 * one serialized loop: earlier parts of a long answer are finalized once they cannot
 * change, the last part carries the status and the Stop button, and only the newest
 * view is ever sent (the pacer coalesces edits).
 */
class PacedEditReply implements ReplyRenderer {
  private readonly parts: string[];
  private readonly sent = new Map<number, string>();
  private latest: { view: ReplyView; final: boolean } | undefined;
  private loop: Promise<void> | undefined;
  private finalEdits: Promise<void>[] = [];

  constructor(
    private readonly target: ReplyTarget,
    private readonly recorder: ReplyRecorder,
    private readonly options: PacedEditsOptions,
  ) {
    this.parts = [...target.parts];
  }

  async open(view: ReplyView): Promise<void> {
    if (this.parts.length > 0) return;
    const payload = this.payload(
      view,
      view.body === "" ? "" : (splitInterim(view.body).at(-1) ?? ""),
    );
    await this.post(payload);
  }

  show(view: ReplyView): void {
    this.latest = { view, final: false };
    this.kick();
  }

  async finish(view: ReplyView): Promise<void> {
    this.latest = { view, final: true };
    this.kick();
    await this.loop;
    const edits = this.finalEdits;
    this.finalEdits = [];
    await Promise.all(edits);
  }

  private kick(): void {
    if (this.loop) return;
    this.loop = (async () => {
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
    const bodies = final
      ? splitAnswer(view.body)
      : view.body === ""
        ? [""]
        : splitInterim(view.body);
    for (let i = 0; i < bodies.length; i++) {
      const isLast = i === bodies.length - 1;
      const payload = isLast
        ? this.payload(view, bodies[i] ?? "")
        : buildReply({
            body: bodies[i] ?? "",
            phase: { kind: "continued" },
            turnId: this.target.turnId,
            part: { index: i },
          });
      const ts = this.parts[i];
      if (ts === undefined) {
        await this.post(payload);
        continue;
      }
      const key = JSON.stringify(payload);
      if (this.sent.get(i) === key) continue;
      this.sent.set(i, key);
      const settled = final || !isLast;
      const edit = this.options.pacer.edit(
        { team: this.target.team, channel: this.target.channel, ts },
        payload,
        { final: settled },
      );
      if (settled) this.finalEdits.push(edit);
      else edit.catch((error: unknown) => this.options.onError?.(error, "interim edit"));
    }
    if (final && this.parts.length > bodies.length) {
      // The stream showed more parts than the final answer has: remove the extra ones.
      const extra = this.parts.splice(bodies.length);
      this.recorder.parts([...this.parts]);
      for (const ts of extra) {
        await this.options.client
          .deleteMessage({ channel: this.target.channel, ts })
          .catch((error: unknown) => this.options.onError?.(error, "delete extra part"));
      }
    }
  }

  private payload(view: ReplyView, body: string): ReplyPayload {
    return buildReply({
      body,
      phase: view.phase,
      turnId: this.target.turnId,
      notes: view.notes,
      ...(this.parts.length > 1 ? { part: { index: this.parts.length - 1 } } : {}),
    });
  }

  private async post(payload: ReplyPayload): Promise<void> {
    const { channel, threadTs, team, turnId } = this.target;
    if (this.parts.length === 0) {
      // A crash may have come between Slack taking the placeholder and the bot recording
      // it: continue in that message rather than leave a second one spinning beside it.
      const found = this.target.postAttempted
        ? await this.options.findReply?.({ channel, threadTs, turnId }).catch(() => undefined)
        : undefined;
      if (found !== undefined) {
        this.parts.push(found);
        this.recorder.parts([...this.parts]);
        return;
      }
      this.recorder.posting();
    }
    const result = await this.options.postGate.post({ team, channel }, () =>
      this.options.client.postMessage({ channel, thread_ts: threadTs, ...payload }),
    );
    this.sent.set(this.parts.length, JSON.stringify(payload));
    this.parts.push(result.ts);
    this.recorder.parts([...this.parts]);
  }
}
