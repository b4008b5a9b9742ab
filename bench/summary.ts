import type { FakeSlack } from "../tools/fake-slack/server.js";
import type { RunningSimulator } from "../tools/simulator/server.js";
import { type Floors, floorsFor } from "./floors.js";
import type { Observer } from "./observer.js";
import type { OutsideView } from "./outside-view.js";
import {
  fleetFigures,
  type ReplicaFigures,
  type ReplicaScrape,
  replicaFigures,
} from "./replica-metrics.js";
import { isExact } from "./stats.js";

/** What one repetition observed, from the observers, the fakes and the bot's /metrics. */

/** Calls that only read; every other call is part of what a reply costs. */
const READS = new Set([
  "auth.test",
  "users.info",
  "conversations.replies",
  "chat.getPermalink",
  "apps.connections.open",
]);

/** What of a scenario's options the summary needs (scenario.ts has their meaning). */
export interface SummaryOptions {
  n: number;
  channels: number;
  rep: number;
  arrivalsPerSecond: number;
  maxChars: number;
  pieceChars: number;
  piecesPerSecond: number;
  sampleMs: number;
}

export interface ScenarioResult {
  n: number;
  channels: number;
  rep: number;
  /** From the first question to the last answer readable whole in Slack, ms. */
  wallMs: number;
  ackMs: number[];
  /**
   * Per answer: the first Slack state showing its first word whole minus the service's first
   * piece, ms (visibility.ts has what "whole words" means).
   */
  firstWordMs: number[];
  /** Per answer: the same from the person's question reaching Slack, ms. */
  askedFirstWordMs: number[];
  /** The first of the three, measured by the separate outside view (outside-view.ts), ms. */
  outsideFirstWordMs: number[];
  /** The largest difference between the two for one answer, ms (NaN when none to compare). */
  outsideDisagreementMs: number;
  /** Per answer shown whole: from the service's last piece to the whole answer readable, ms. */
  afterLastPieceMs: number[];
  /** Per answer shown whole: from the person's question to the whole answer readable, ms. */
  askedCompleteMs: number[];
  /** Per answer: the most its visible text (whole words) was behind the written text, ms. */
  lagMaxMs: number[];
  /** Every answer's lag, sampled every `sampleMs` while it was written and shown, ms. */
  lagMs: number[];
  /** Slack calls that write (posts, edits, streams, statuses): all but the reads. */
  slackWriteCalls: number;
  slackCallsByMethod: Record<string, number>;
  slack429: number;
  /** The same by method, only the methods that met any. */
  slack429ByMethod: Record<string, number>;
  service429: number;
  serviceRequests: number;
  exact: boolean[];
  answerChars: number[];
  outcomes: Record<string, number>;
  unsettled: number;
  /** What Slack's limits allow at best for this workload (floors.ts). */
  floors: Floors;
  /** Bot process figures from its /metrics. */
  idleRssBytes: number;
  endRssBytes: number;
  peakRssBytes: number;
  endHeapUsedBytes: number;
  cpuMs: number;
  botProblems: string[];
  /** Copies of the bot that shared the work (1: one process on SQLite). */
  replicas: number;
  /** Every Slack call, reads included, by all replicas together. */
  slackCalls: number;
  /** Each replica's own figures. */
  perReplica: ReplicaFigures[];
  /** Conversations taken over from a replica whose lease expired, all replicas together. */
  takeovers: number;
  /** bridge_shared_budget_waits_total, all replicas together. */
  sharedBudgetWaits: number;
}

export function summarize(
  o: SummaryOptions,
  w: {
    observer: Observer;
    outside: OutsideView;
    slack: FakeSlack;
    sim: RunningSimulator;
  },
  t: { started: number; until: number; ackMs: number[]; open: number },
  m: { replicas: readonly ReplicaScrape[]; problems: readonly string[] },
): ScenarioResult {
  const { observer, outside, slack, sim } = w;
  const firstWordMs: number[] = [];
  const askedFirstWordMs: number[] = [];
  const afterLastPieceMs: number[] = [];
  const askedCompleteMs: number[] = [];
  const byQuestion = new Map<string, number>();
  const lagMaxMs: number[] = [];
  const lagMs: number[] = [];
  const exact: boolean[] = [];
  const answerChars: number[] = [];
  let lastComplete = t.started;
  for (const conversation of observer.watchedConversations()) {
    const run = observer.runOf(conversation);
    const transcript = slack.threadTranscript(conversation.channel, conversation.threadTs);
    exact.push(isExact(transcript, run?.output));
    const measured = observer.measure(conversation, t.until, o.sampleMs);
    if (!measured) continue;
    answerChars.push(measured.answerChars);
    if (measured.firstWordMs !== undefined) {
      firstWordMs.push(measured.firstWordMs);
      byQuestion.set(conversation.question, measured.firstWordMs);
    }
    if (measured.askedFirstWordMs !== undefined) askedFirstWordMs.push(measured.askedFirstWordMs);
    if (measured.afterLastPieceMs !== undefined) afterLastPieceMs.push(measured.afterLastPieceMs);
    if (measured.askedCompleteMs !== undefined) askedCompleteMs.push(measured.askedCompleteMs);
    lagMaxMs.push(measured.lagMaxMs);
    lagMs.push(...measured.lagSamplesMs);
    lastComplete = Math.max(lastComplete, measured.completeAt ?? t.until);
  }
  const outsideView = outside.firstWord();
  const outsideFirstWordMs = outsideView.flatMap((seen) =>
    seen.ms === undefined ? [] : [seen.ms],
  );

  const calls = slack.calls;
  const byMethod: Record<string, number> = {};
  for (const call of calls) byMethod[call.method] = (byMethod[call.method] ?? 0) + 1;
  // The replicas as one bot (one replica: exactly its own figures).
  const fleet = fleetFigures(m.replicas);
  const meanChars = answerChars.reduce((a, b) => a + b, 0) / Math.max(1, answerChars.length);
  return {
    n: o.n,
    channels: o.channels,
    rep: o.rep,
    wallMs: (t.open > 0 ? t.until : lastComplete) - t.started,
    ackMs: t.ackMs,
    firstWordMs,
    askedFirstWordMs,
    outsideFirstWordMs,
    outsideDisagreementMs: disagreement(byQuestion, outsideView),
    afterLastPieceMs,
    askedCompleteMs,
    lagMaxMs,
    lagMs,
    slackWriteCalls: calls.filter((call) => !READS.has(call.method)).length,
    slackCallsByMethod: byMethod,
    slack429: slack.rateLimited,
    slack429ByMethod: slack429ByMethod(slack),
    service429: sim.control.requests.filter((r) => r.status === 429).length,
    serviceRequests: sim.control.requests.length,
    exact,
    answerChars,
    outcomes: fleet.outcomes,
    unsettled: t.open,
    floors: floorsFor({
      n: o.n,
      channels: o.channels,
      arrivalsPerSecond: o.arrivalsPerSecond,
      answerChars: meanChars || o.maxChars,
      pieceChars: o.pieceChars,
      piecesPerSecond: o.piecesPerSecond,
    }),
    idleRssBytes: fleet.idleRssBytes,
    endRssBytes: fleet.endRssBytes,
    peakRssBytes: fleet.peakRssBytes,
    endHeapUsedBytes: fleet.endHeapUsedBytes,
    cpuMs: fleet.cpuMs,
    botProblems: [...m.problems],
    replicas: m.replicas.length,
    slackCalls: calls.length,
    perReplica: replicaFigures(m.replicas),
    takeovers: fleet.takeovers,
    sharedBudgetWaits: fleet.sharedBudgetWaits,
  };
}

/**
 * The 429s the fake Slack's rate limits answered, by method (each method called: a call
 * answered 429 is in its calls too), leaving out those that met none; in alphabetical order.
 */
export function slack429ByMethod(
  slack: Pick<FakeSlack, "calls" | "rateLimitedFor">,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const method of [...new Set(slack.calls.map((call) => call.method))].sort()) {
    const count = slack.rateLimitedFor(method);
    if (count > 0) out[method] = count;
  }
  return out;
}

/**
 * The largest difference between the bench's first complete word and the outside view's for
 * one answer, ms: Infinity when only one of them saw it, NaN when there was nothing to compare.
 */
export function disagreement(
  ours: ReadonlyMap<string, number>,
  theirs: readonly { question: string; ms: number | undefined }[],
): number {
  let worst = Number.NaN;
  for (const { question, ms } of theirs) {
    const mine = ours.get(question);
    const gap =
      mine === undefined && ms === undefined
        ? 0
        : mine === undefined || ms === undefined
          ? Number.POSITIVE_INFINITY
          : Math.abs(mine - ms);
    worst = Number.isNaN(worst) ? gap : Math.max(worst, gap);
  }
  return worst;
}
