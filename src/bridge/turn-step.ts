import type { Conversation } from "../store/stores.js";
import type { Turn } from "../store/turn.js";
import type { LiveTurn } from "./live-turn.js";
import type { OutageOptions } from "./outage.js";

/** What every step of a turn is given besides the turn's record. */
export interface StepContext {
  live: LiveTurn;
  /** The turn's conversation, as of the last step that changed it. */
  conversation: Conversation;
  /** How the step's service calls ride out an outage (retries, the "keeps trying" note). */
  outage: OutageOptions;
  /** Whose turn it is: the fairness key in the service budget. */
  party: string;
}

/**
 * One step of the runner: does its part unless the stored turn says it is done, records
 * the result through the turn store's transition, and returns the turn as recorded.
 */
export type TurnStep = (turn: Turn, context: StepContext) => Promise<Turn>;
