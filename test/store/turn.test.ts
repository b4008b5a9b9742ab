import { describe, expect, it } from "vitest";
import {
  applyTurnEvent,
  IllegalTransition,
  receivedTurn,
  TURN_STATES,
  type Turn,
  type TurnEvent,
  type TurnState,
} from "../../src/store/turn.js";

const EVENTS: Record<TurnEvent["type"], TurnEvent> = {
  compose: { type: "compose", serviceContent: "ctx\nq", contextThroughTs: "1.2", notes: ["n"] },
  post_attempt: { type: "post_attempt" },
  message: { type: "message", serviceMessageId: "m1" },
  run_attempt: { type: "run_attempt", settings: { maxSteps: 3 } },
  run_not_started: { type: "run_not_started" },
  run_start: { type: "run_start", runId: "r1", startedAt: 42 },
  reply_attempt: { type: "reply_attempt", part: 1 },
  reply: { type: "reply", parts: ["9.1", "9.2"] },
  finish: { type: "finish", outcome: "completed", modelUsed: "m-large", error: null },
};

/**
 * The whole machine, written out by hand (not read from the table under test): the state
 * each event leads to from each state, or "illegal".
 */
const EXPECTED: Record<TurnState, Record<TurnEvent["type"], TurnState | "illegal">> = {
  received: {
    compose: "composed",
    post_attempt: "illegal",
    message: "illegal",
    run_attempt: "illegal",
    run_not_started: "illegal",
    run_start: "illegal",
    reply_attempt: "received",
    reply: "received",
    finish: "finished",
  },
  composed: {
    compose: "illegal",
    post_attempt: "posting",
    message: "illegal",
    run_attempt: "illegal",
    run_not_started: "illegal",
    run_start: "illegal",
    reply_attempt: "composed",
    reply: "composed",
    finish: "finished",
  },
  posting: {
    compose: "illegal",
    post_attempt: "posting",
    message: "message_posted",
    run_attempt: "illegal",
    run_not_started: "illegal",
    run_start: "illegal",
    reply_attempt: "posting",
    reply: "posting",
    finish: "finished",
  },
  message_posted: {
    compose: "illegal",
    post_attempt: "illegal",
    message: "illegal",
    run_attempt: "run_starting",
    run_not_started: "illegal",
    run_start: "illegal",
    reply_attempt: "message_posted",
    reply: "message_posted",
    finish: "finished",
  },
  run_starting: {
    compose: "illegal",
    post_attempt: "illegal",
    message: "illegal",
    run_attempt: "illegal",
    run_not_started: "message_posted",
    run_start: "run_started",
    reply_attempt: "run_starting",
    reply: "run_starting",
    finish: "finished",
  },
  run_started: {
    compose: "illegal",
    post_attempt: "illegal",
    message: "illegal",
    run_attempt: "illegal",
    run_not_started: "illegal",
    run_start: "illegal",
    reply_attempt: "run_started",
    reply: "run_started",
    finish: "finished",
  },
  finished: {
    compose: "illegal",
    post_attempt: "illegal",
    message: "illegal",
    run_attempt: "illegal",
    run_not_started: "illegal",
    run_start: "illegal",
    reply_attempt: "illegal",
    reply: "illegal",
    finish: "illegal",
  },
};

const base = receivedTurn(
  {
    conversationId: 1,
    team: "T",
    channel: "C",
    threadTs: "1.1",
    messageTs: "1.1",
    user: "U1",
    content: "q",
    notes: [],
  },
  "turn-1",
  1_000,
);
const inState = (state: TurnState): Turn => ({ ...base, state });

describe("the turn state machine", () => {
  for (const state of TURN_STATES) {
    for (const [type, event] of Object.entries(EVENTS)) {
      const expected = EXPECTED[state][type as TurnEvent["type"]];
      it(`${type} in ${state} is ${expected === "illegal" ? "refused" : `→ ${expected}`}`, () => {
        const apply = () => applyTurnEvent(inState(state), event);
        if (expected === "illegal") {
          expect(apply).toThrow(IllegalTransition);
          expect(apply).toThrow(`turn turn-1 is ${state}: ${type} is not allowed there`);
        } else {
          expect(apply().state).toBe(expected);
        }
      });
    }
  }

  it("records what each event carries, and leaves the rest as it was", () => {
    const composed = applyTurnEvent(base, EVENTS.compose);
    expect(composed).toEqual({
      ...base,
      state: "composed",
      serviceContent: "ctx\nq",
      contextThroughTs: "1.2",
      notes: ["n"],
    });
    const posted = applyTurnEvent(applyTurnEvent(composed, EVENTS.post_attempt), EVENTS.message);
    expect(posted.serviceMessageId).toBe("m1");
    const refused = applyTurnEvent(applyTurnEvent(posted, EVENTS.run_attempt), {
      type: "run_not_started",
    });
    expect([refused.state, refused.settings]).toEqual(["message_posted", { maxSteps: 3 }]);
    const started = applyTurnEvent(applyTurnEvent(refused, EVENTS.run_attempt), EVENTS.run_start);
    expect([started.runId, started.settings, started.runStartedAt]).toEqual([
      "r1",
      { maxSteps: 3 },
      42,
    ]);
    const replied = applyTurnEvent(applyTurnEvent(started, EVENTS.reply_attempt), EVENTS.reply);
    expect([replied.replyPostsAttempted, replied.replyParts]).toEqual([2, ["9.1", "9.2"]]);
    // An attempt at an earlier part (a resumed reply edits it) never lowers the count.
    const again = applyTurnEvent(replied, { type: "reply_attempt", part: 0 });
    expect(again.replyPostsAttempted).toBe(2);
    const done = applyTurnEvent(replied, EVENTS.finish);
    expect([done.outcome, done.modelUsed, done.error]).toEqual(["completed", "m-large", null]);
    expect(done.serviceContent).toBe("ctx\nq");
  });

  it("never changes the turn it is given", () => {
    const before = structuredClone(base);
    applyTurnEvent(base, EVENTS.compose);
    applyTurnEvent(base, EVENTS.reply);
    expect(base).toEqual(before);
  });
});
