import type { SharedFile } from "../files/kinds.js";
import type { RunSettings } from "../service/schemas.js";

/**
 * A turn is one answered Slack message, and this module is its state machine: the states,
 * the events that move it, which event is legal in which state, and what each one records.
 * Every store applies events through `applyTurnEvent`, so the rules live here and nowhere
 * else, and a restart resumes each unfinished turn from what its state says was done:
 *
 *   received ─compose─► composed ─post_attempt─► posting ─message─► message_posted
 *        ─run_attempt─► run_starting ─run_start─► run_started ─finish─► finished
 *                       └─run_not_started─► message_posted
 *
 * `posting` means a post of the question was sent and its outcome may be unknown (a crash,
 * a reset): the next attempt looks in the service thread before posting again.
 * `run_starting` means a run start was sent and its outcome is not known. Unlike a message,
 * a run cannot be looked up (the interface lists no runs of a thread), and a second start
 * would make the assistant answer twice; so a turn found `run_starting` is never started
 * again: it ends saying the answer may not have started. Only a start that certainly
 * started nothing (a 429, a connection never made) goes back (`run_not_started`). `finish`
 * is legal from every state but `finished` (a stop, a refusal or an error ends a turn
 * wherever it is). The reply's Slack messages (`reply_attempt`, `reply`) are recorded in
 * any unfinished state: a queued turn shows its placeholder before it starts.
 */
export const TURN_STATES = [
  "received",
  "composed",
  "posting",
  "message_posted",
  "run_starting",
  "run_started",
  "finished",
] as const;
export type TurnState = (typeof TURN_STATES)[number];
export type TurnOutcome = "completed" | "failed" | "stopped" | "error";

export interface Turn {
  id: string;
  conversationId: number;
  /** The installation's workspace: with channel and ts, the key of the turn. */
  team: string;
  channel: string;
  threadTs: string;
  messageTs: string;
  user: string;
  /**
   * The organisation the person who asked belongs to (their workspace or Enterprise org):
   * in a Slack Connect channel it differs from `team`, which keys the turn.
   */
  authorTeam: string;
  /** The person's question, as readable text. */
  content: string;
  /** The files the question's message carried, as Slack described them (read when it runs). */
  files: SharedFile[];
  /** Short notes shown under the reply (files not read, a thread left out). */
  notes: string[];
  state: TurnState;
  outcome: TurnOutcome | null;
  /** The text posted to the service (the question with the thread before it); fixed once composed. */
  serviceContent: string | null;
  /** The Slack ts the composed text carries the thread up to; null when none was read. */
  contextThroughTs: string | null;
  serviceMessageId: string | null;
  runId: string | null;
  /** The settings the run was started with (those of the latest start sent). */
  settings: RunSettings | null;
  /** When the run started, epoch ms: the run timeout counts from it across restarts. */
  runStartedAt: number | null;
  /**
   * How many of the reply's messages had their post sent. One more than `replyParts` means
   * the next part may be in Slack although its ts was not recorded (a crash in between).
   */
  replyPostsAttempted: number;
  /** Every reply message of this turn, in order; the first is the placeholder. */
  replyParts: string[];
  modelUsed: string | null;
  error: string | null;
  createdAt: number;
  /**
   * Who asked to stop the turn from a replica that does not run it, before its run existed
   * (`TurnStore.requestStop`); the replica running it stops it at its next step. Not a
   * transition: no transition writes it, so none can undo it.
   */
  stopRequestedBy: string | null;
}

export interface NewTurn {
  conversationId: number;
  team: string;
  channel: string;
  threadTs: string;
  messageTs: string;
  user: string;
  /** The person's organisation; default `team` (a person of the installation's workspace). */
  authorTeam?: string;
  content: string;
  /** The files of the question's message; default none. */
  files?: SharedFile[];
  notes: string[];
}

export type TurnEvent =
  | { type: "compose"; serviceContent: string; contextThroughTs: string | null; notes: string[] }
  | { type: "post_attempt" }
  | { type: "message"; serviceMessageId: string }
  | { type: "run_attempt"; settings: RunSettings }
  | { type: "run_not_started" }
  | { type: "run_start"; runId: string; startedAt: number }
  | { type: "reply_attempt"; part: number }
  | { type: "reply"; parts: string[] }
  | { type: "finish"; outcome: TurnOutcome; modelUsed?: string | null; error?: string | null };

const UNFINISHED = TURN_STATES.filter((s) => s !== "finished");

/** Which states each event is legal in, and the state it leads to (none: the state stays). */
export const TURN_TRANSITIONS: Record<
  TurnEvent["type"],
  { from: readonly TurnState[]; to?: TurnState }
> = {
  compose: { from: ["received"], to: "composed" },
  post_attempt: { from: ["composed", "posting"], to: "posting" },
  message: { from: ["posting"], to: "message_posted" },
  run_attempt: { from: ["message_posted"], to: "run_starting" },
  run_not_started: { from: ["run_starting"], to: "message_posted" },
  run_start: { from: ["run_starting"], to: "run_started" },
  reply_attempt: { from: UNFINISHED },
  reply: { from: UNFINISHED },
  finish: { from: UNFINISHED, to: "finished" },
};

export class IllegalTransition extends Error {
  constructor(
    readonly turnId: string,
    readonly state: TurnState,
    readonly event: TurnEvent["type"],
  ) {
    super(`turn ${turnId} is ${state}: ${event} is not allowed there`);
    this.name = "IllegalTransition";
  }
}

/** A new turn, as it is recorded when its Slack message arrives. */
export function receivedTurn(input: NewTurn, id: string, now: number): Turn {
  return {
    ...input,
    authorTeam: input.authorTeam ?? input.team,
    files: input.files ?? [],
    id,
    state: "received",
    outcome: null,
    serviceContent: null,
    contextThroughTs: null,
    serviceMessageId: null,
    runId: null,
    settings: null,
    runStartedAt: null,
    replyPostsAttempted: 0,
    replyParts: [],
    modelUsed: null,
    error: null,
    createdAt: now,
    stopRequestedBy: null,
  };
}

/** The turn after `event`; throws IllegalTransition when its state does not allow it. */
export function applyTurnEvent(turn: Turn, event: TurnEvent): Turn {
  const rule = TURN_TRANSITIONS[event.type];
  if (!rule.from.includes(turn.state)) throw new IllegalTransition(turn.id, turn.state, event.type);
  const next: Turn = { ...turn, state: rule.to ?? turn.state };
  switch (event.type) {
    case "compose":
      return { ...next, ...pick(event, "serviceContent", "contextThroughTs", "notes") };
    case "message":
      return { ...next, serviceMessageId: event.serviceMessageId };
    case "run_attempt":
      return { ...next, settings: event.settings };
    case "run_start":
      return { ...next, runId: event.runId, runStartedAt: event.startedAt };
    case "reply_attempt":
      // Part `part` (0-based) is about to be posted: `part + 1` posts have been sent.
      return { ...next, replyPostsAttempted: Math.max(turn.replyPostsAttempted, event.part + 1) };
    case "reply":
      return { ...next, replyParts: [...event.parts] };
    case "finish":
      return {
        ...next,
        outcome: event.outcome,
        modelUsed: event.modelUsed ?? turn.modelUsed,
        error: event.error ?? turn.error,
      };
    case "post_attempt":
    case "run_not_started":
      return next;
  }
}

function pick<T, K extends keyof T>(value: T, ...keys: K[]): Pick<T, K> {
  const out = {} as Pick<T, K>;
  for (const key of keys) out[key] = value[key];
  return out;
}
