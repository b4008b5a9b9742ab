import type { Allowance } from "../../budgets/allowance.js";
import { TokenBucket } from "../../budgets/token-bucket.js";
import type { CallFailure } from "../web-api/call-failure.js";
import { ArrivalStamps, ChannelLane, type Queued } from "./channel-lane.js";
import type { CallScheduler, Lanes } from "./scheduler.js";

/** A note only `user` sees (`chat.postEphemeral`), in a channel and maybe a thread of it. */
export interface Note {
  team: string;
  channel: string;
  user: string;
  text: string;
  threadTs?: string | undefined;
}

/**
 * What became of a note handed to the gate: on its way, left out because the person was told
 * the same thing here a moment ago, or dropped because too many notes wait in the channel.
 */
export type NoteResult = "queued" | "repeated" | "dropped";

export interface NoteGateOptions {
  /** The scheduler every Slack call of the bot goes through. */
  scheduler: CallScheduler;
  /** Makes the `chat.postEphemeral` call. */
  send: (note: Note) => Promise<unknown>;
  /**
   * Notes per minute per workspace, all channels together; default 30 (Slack's Tier 4 is
   * about 100, and a flood of refused people must not take all of it).
   */
  perMinute?: number;
  /** Notes a workspace may send back to back; default 5. */
  burst?: number;
  /** Notes per minute per channel; default 10. */
  channelPerMinute?: number;
  /** Notes one channel may send back to back; default 3. */
  channelBurst?: number;
  /** Notes that may wait per channel; a note past it is dropped; default 10. */
  maxWaiting?: number;
  /** The same note to the same person in the same channel goes once in this window, ms; default 10 minutes. */
  repeatAfterMs?: number;
  /** Most (person, channel, note) kept to recognise a repeat; the oldest goes first; default 10_000. */
  maxRemembered?: number;
  /** A note Slack refused, or that failed after its retries: it is not sent. */
  onFailed?: (note: Note, error: unknown) => void;
}

const METHOD = "chat.postEphemeral";
const NOTE_RETRIES = { retries: 2, rateLimitRetries: 3 };

interface Waiting extends Queued {
  note: Note;
}

/** The notes of one channel: oldest first, one call at a time, at the channel's own pace. */
class ChannelNotes extends ChannelLane<Waiting> {
  constructor(
    private readonly gate: {
      perMinute: number;
      burst: number;
      onFailed: NoteGateOptions["onFailed"];
      send: NoteGateOptions["send"];
    },
    now: number,
    pace: Allowance,
  ) {
    super(gate, now, pace);
  }

  start(): Promise<unknown> {
    return this.gate.send(this.begin().note);
  }

  landed(_value: unknown, now: number): void {
    this.queue.shift();
    this.lastActivity = now;
  }

  failed(failure: CallFailure, error: unknown, now: number): number | undefined {
    // A note is a courtesy: a few retries after a 5xx or a 429, then it is let go.
    const next = this.afterFailure(failure, NOTE_RETRIES, now);
    if (next === "wait") return undefined;
    if (next !== "give_up") return next;
    const head = this.queue.shift() as Waiting;
    this.gate.onFailed?.(head.note, error);
    return undefined;
  }

  abandoned(): void {
    this.queue.shift();
  }

  close(): void {
    // Notes promise nothing to anyone: what waits is simply not sent.
    this.queue.length = 0;
  }
}

/**
 * The `chat.postEphemeral` policy on the call scheduler: notes only one person sees (a
 * refusal, "too many questions waiting", a Stop pressed by someone else). People the bot
 * refuses can write as fast as they like, so each note is paced (per channel and per
 * workspace, oldest first), a channel's queue is bounded, and the same note to the same
 * person in the same channel goes once per `repeatAfterMs`: a flood of refused messages
 * costs a few calls, never one per message.
 */
export class NoteGate {
  private readonly channels: Lanes<ChannelNotes>;
  private readonly told = new Map<string, number>();
  private readonly rules;
  private readonly arrivals = new ArrivalStamps();

  constructor(private readonly options: NoteGateOptions) {
    this.rules = {
      perMinute: options.channelPerMinute ?? 10,
      burst: options.channelBurst ?? 3,
      onFailed: options.onFailed,
      send: options.send,
    };
    // Fail at construction, not at the first note.
    new TokenBucket(this.rules.perMinute, this.rules.burst);
    this.channels = options.scheduler.register<ChannelNotes>(METHOD, {
      perMinute: options.perMinute ?? 30,
      burst: options.burst ?? 5,
    });
  }

  /** Hands a note over to be sent when the budgets allow; never waits. */
  tell(note: Note): NoteResult {
    if (this.channels.closed) return "dropped";
    const now = this.options.scheduler.clock.now();
    const key = [note.team, note.channel, note.user, note.text].join("\u0000");
    const last = this.told.get(key);
    if (last !== undefined && now - last < (this.options.repeatAfterMs ?? 600_000)) {
      return "repeated";
    }
    const { team, channel } = note;
    const lane = this.channels.get(team, channel, () => {
      const pace = this.options.scheduler.allowance(
        { team, method: METHOD, lane: channel },
        this.rules,
      );
      return new ChannelNotes(this.rules, now, pace);
    });
    if (lane.queue.length >= (this.options.maxWaiting ?? 10)) return "dropped";
    this.remember(key, now);
    lane.queue.push({ note, queuedAt: this.arrivals.next(now), failures: 0, rateLimits: 0 });
    this.channels.wake(team, channel);
    return "queued";
  }

  /** Notes waiting, over every channel, and notes sent since the start. */
  stats(): { waiting: number; sent: number } {
    const waiting = this.channels.all().reduce((n, lane) => n + lane.queue.length, 0);
    return { waiting, sent: this.channels.counts().landed };
  }

  close(): void {
    this.channels.close();
  }

  private remember(key: string, now: number): void {
    this.told.delete(key);
    this.told.set(key, now);
    const max = this.options.maxRemembered ?? 10_000;
    for (const oldest of this.told.keys()) {
      if (this.told.size <= max) break;
      this.told.delete(oldest);
    }
  }
}
