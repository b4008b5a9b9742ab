import { RateLimits } from "../tools/fake-slack/limits.js";
import { percentile } from "./stats.js";

/**
 * The best any bot could do on a workload under Slack's rate limits, as the fake Slack
 * enforces them (tools/fake-slack/limits.ts): each figure the bench measures is
 * printed beside its floor. The limits are not restated here: calls are planned against a
 * fresh RateLimits, the fake's own, in steps of `stepMs` (default 10 ms). Only the methods
 * the fake limits count: one it does not know is no way for a bot to show text.
 *
 * The floors assume an ideal bot and an instant network: a message can carry its answer
 * text from the moment the text is written, and the whole answer fits in one message.
 */

const MINUTE_MS = 60_000;
/** Planning gives up past this, ms: a workload this slow is misconfigured. */
const HORIZON_MS = 24 * 3_600_000;

export interface FloorWorkload {
  /** Conversations, spread round robin over `channels`, asked at `arrivalsPerSecond`. */
  n: number;
  channels: number;
  arrivalsPerSecond: number;
  /** Each answer: `answerChars` characters in pieces of `pieceChars`, `piecesPerSecond`. */
  answerChars: number;
  pieceChars: number;
  piecesPerSecond: number;
}

export interface Floors {
  /**
   * Per conversation: from its question to the first message that could show its text, ms.
   * (From the service's first text there is no floor: a bot may hold the service back until
   * it has a message to show the text in.)
   */
  firstTextMs: number[];
  firstTextP50Ms: number;
  firstTextP95Ms: number;
  /**
   * The least "visible text behind written text" some answer must suffer, ms, if the service
   * writes every answer from its question on (as the workload has it).
   */
  lagMaxMs: number;
  /** From the first question until every answer can be shown whole, ms. */
  allShownMs: number;
}

interface Call {
  readyAt: number;
  channel: string;
}

/**
 * When each call can go at the earliest, first come first served per channel, each by any
 * of `methods` that the limits allow at that moment.
 */
export function plan(
  limits: RateLimits,
  methods: readonly string[],
  calls: readonly Call[],
  stepMs: number,
): number[] {
  const at: number[] = new Array(calls.length).fill(Number.NaN);
  const queues = new Map<string, number[]>();
  const order = calls
    .map((_, i) => i)
    .sort((a, b) => (calls[a] as Call).readyAt - (calls[b] as Call).readyAt);
  for (const i of order) {
    const channel = (calls[i] as Call).channel;
    queues.set(channel, [...(queues.get(channel) ?? []), i]);
  }
  let left = calls.length;
  let t = Math.min(...calls.map((c) => c.readyAt));
  while (left > 0) {
    if (t > HORIZON_MS) throw new RangeError("the workload cannot be shown within a day");
    for (const [channel, queue] of queues) {
      while (queue.length > 0 && (calls[queue[0] as number] as Call).readyAt <= t) {
        if (!methods.some((method) => limits.take(method, channel, t).allowed)) break;
        at[queue.shift() as number] = t;
        left--;
      }
    }
    t += stepMs;
  }
  return at;
}

/** The methods by which a bot can show text: making a message, changing one. */
export interface Ways {
  create: readonly string[];
  change: readonly string[];
}

export const SLACK_WAYS: Ways = {
  create: ["chat.postMessage", "chat.startStream"],
  change: ["chat.update", "chat.appendStream", "chat.stopStream"],
};

/**
 * Lower bounds, each valid on its own: no bot can beat them under these limits. Messages
 * are made as early as the limits allow, in the order the questions came (which is what
 * makes the k-th answer of a channel wait least); an answer is whole no sooner than its
 * last piece is written and its message made.
 */
export function floorsFor(
  w: FloorWorkload,
  newLimits: () => RateLimits = () => new RateLimits(),
  ways: Ways = SLACK_WAYS,
  stepMs = 10,
): Floors {
  const limits = newLimits();
  const known = (methods: readonly string[]) =>
    methods.filter((m) => limits.limitOf(m) !== undefined);
  const create = known(ways.create);
  const change = known(ways.change);
  const pieceMs = 1_000 / w.piecesPerSecond;
  const writingMs = (Math.ceil(w.answerChars / w.pieceChars) - 1) * pieceMs;
  const asked = Array.from({ length: w.n }, (_, i) => ({
    // The service writes from the moment the question arrives: nothing of the bot's counts.
    readyAt: (i * 1_000) / w.arrivalsPerSecond,
    channel: `C${i % w.channels}`,
  }));
  const created = plan(limits, create, asked, stepMs);
  const firstTextMs = asked.map((a, i) => (created[i] as number) - a.readyAt);
  const lastWritten = Math.max(...asked.map((a) => a.readyAt + writingMs));

  // Every message made or changed while the answers are written is shared by all of them:
  // some answer gets no more than its share, and between two of its changes it falls behind.
  const spanMs = lastWritten - (asked[0]?.readyAt ?? 0);
  const windows = Math.max(1, Math.ceil(spanMs / MINUTE_MS));
  const perWindow = [...create, ...change].reduce((sum, m) => sum + (limits.limitOf(m) ?? 0), 0);
  const share = Math.floor((perWindow * windows) / w.n);
  const spacingMs = Math.max(0, writingMs / (share + 1) - pieceMs);

  return {
    firstTextMs,
    firstTextP50Ms: percentile(firstTextMs, 50),
    firstTextP95Ms: percentile(firstTextMs, 95),
    // Nothing shows before a message exists, while the text is being written.
    lagMaxMs: Math.max(spacingMs, ...firstTextMs),
    allShownMs: Math.max(lastWritten, ...created),
  };
}
