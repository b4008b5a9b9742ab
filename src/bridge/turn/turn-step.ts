import type { Conversation, RunSettings } from "../../store/stores.js";
import type { Turn } from "../../store/turn.js";
import type { Caller } from "../ports.js";
import type { OutageOptions } from "./outage.js";
import type { TurnLife } from "./turn-life.js";

/** A person's settings as read at `at` (with the question's record, TurnStore.record). */
export interface SettingsRead {
  settings: RunSettings;
  at: number;
}

/** What every step of a turn is given besides the turn's record. */
export interface StepContext {
  life: TurnLife;
  /** The turn's conversation, as of the last step that changed it. */
  conversation: Conversation;
  /** How the step's service calls ride out an outage (retries, the "keeps trying" note). */
  outage: OutageOptions;
  /** Whose turn it is: the fairness key in the service budget. */
  party: string;
  /**
   * The asker's settings read with the question's record, when the turn ran at once on it:
   * the run's start goes by them unless they are old by then (RunStart), instead of a read.
   */
  settingsRead?: SettingsRead | undefined;
  /**
   * The question's post attempt was recorded by this run of the turn, and nothing has been
   * sent since (QuestionPost.attempt): the post needs no look for an earlier one.
   */
  unsentAttempt?: boolean;
  /**
   * The question's message, posted and not recorded yet (QuestionPost.step): the run's start
   * records it in the write of its own attempt (RunStart), and the runner records it alone
   * when no start was attempted. Until then the stored turn is `posting`, which a crash
   * leaves to the look for the message that a retry makes first.
   */
  unrecordedMessage?: string | undefined;
  /**
   * The service thread just opened, on its way to the conversation's record (threadOpen):
   * resolves with the thread the conversation keeps. The question's post holds its body until
   * then (QuestionPost.step), so no message goes to a thread the record does not name.
   */
  threadRecorded?: Promise<string> | undefined;
  /**
   * Records a step made without waiting for them to land (the service thread's id, how far
   * the conversation's thread is passed on): the runner ends the turn only once they have
   * landed.
   */
  landing: Promise<unknown>[];
}

/**
 * One step of the runner: does its part unless the stored turn says it is done, records
 * the result through the turn store's transition, and returns the turn as recorded.
 */
export type TurnStep = (turn: Turn, context: StepContext) => Promise<Turn>;

/**
 * Who a step's service calls are for: the asker, and whose the conversation's service thread
 * is once that is known (the service answers a thread only to the token that created it).
 */
export function callerOf(context: StepContext): Caller {
  return callerFor(context.party, context.conversation);
}

/** The caller of a call for `party` (of the conversation's workspace) about its service thread. */
export function callerFor(party: string, conversation: Conversation | undefined): Caller {
  if (!conversation) return { party };
  const owner = conversation.serviceThreadOwner;
  const caller = { party, workspace: conversation.team };
  return owner === null ? caller : { ...caller, threadOwner: owner };
}
