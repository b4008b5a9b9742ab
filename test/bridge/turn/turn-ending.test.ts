import { describe, expect, it } from "vitest";
import { RunAbandoned } from "../../../src/bridge/turn/relay.js";
import { errorSummary } from "../../../src/bridge/turn/service-failure.js";
import {
  describeFailure,
  refusal,
  runEnding,
  timeoutMessage,
} from "../../../src/bridge/turn/turn-ending.js";
import {
  AuthenticationError,
  BadRequestError,
  ConnectionError,
  ProtocolError,
  RateLimitedError,
} from "../../../src/service/errors.js";
import type { Run } from "../../../src/service/schemas.js";

const run = (fields: Partial<Run>): Run =>
  ({
    id: "r1",
    threadId: "t1",
    status: "completed",
    output: null,
    modelUsed: null,
    error: null,
    ...fields,
  }) as Run;
const context = {
  shown: "shown so far",
  stoppedBy: undefined,
  timedOut: false,
  runTimeoutMs: 900_000,
};

describe("runEnding", () => {
  it("ends a completed run with its output and model", () => {
    const ending = runEnding(
      run({ output: [{ type: "text", text: "The answer." }], modelUsed: "assistant-max" }),
      context,
    );
    expect(ending).toEqual({
      phase: { kind: "completed", modelUsed: "assistant-max" },
      body: "The answer.",
      outcome: "completed",
    });
  });

  it("ends a failed run with its error, or a plain sentence when it gave none", () => {
    expect(runEnding(run({ status: "failed", error: " boom " }), context)).toEqual({
      phase: { kind: "failed", error: "boom" },
      body: "",
      outcome: "failed",
    });
    expect(runEnding(run({ status: "failed" }), context).phase).toEqual({
      kind: "failed",
      error: "the assistant reported an error",
    });
  });

  it("ends a canceled run as stopped by whoever stopped it, keeping the run's text or what was shown", () => {
    const withOutput = runEnding(
      run({ status: "canceled", output: [{ type: "text", text: "partial" }], modelUsed: "m" }),
      { ...context, stoppedBy: "U1" },
    );
    expect(withOutput).toEqual({
      phase: { kind: "stopped", by: "U1", modelUsed: "m" },
      body: "partial",
      outcome: "stopped",
    });
    expect(runEnding(run({ status: "canceled" }), context).body).toBe("shown so far");
  });

  it("says the assistant did not finish when the bot stopped it for taking too long", () => {
    const ending = runEnding(run({ status: "canceled" }), { ...context, timedOut: true });
    expect(ending.outcome).toBe("error");
    expect(ending.phase).toEqual({
      kind: "unreachable",
      message: "The assistant did not finish within 15 minutes, so the run was stopped.",
    });
    expect(timeoutMessage(60_000)).toBe(
      "The assistant did not finish within 1 minute, so the run was stopped.",
    );
    expect(timeoutMessage(5_000)).toBe(
      "The assistant did not finish within the time limit, so the run was stopped.",
    );
  });
});

describe("refusal", () => {
  it("refuses a message over the limit, and one with no question, and nothing else", () => {
    expect(refusal("x".repeat(20_001), 20_000)?.phase).toEqual({
      kind: "unreachable",
      message:
        "Your message is 20,001 characters long; the limit is 20,000. Please shorten it and ask again.",
    });
    expect(refusal("   ", 100)?.outcome).toBe("error");
    expect(refusal("a question", 100)).toBeUndefined();
  });
});

describe("describeFailure", () => {
  it("gives one sentence per kind of failure", () => {
    const request = { method: "POST", path: "/v1/thread" };
    expect(describeFailure(new ConnectionError("refused", request, false))).toMatch(
      /could not be reached/,
    );
    expect(describeFailure(new ProtocolError("bad json", request, 200))).toMatch(/could not read/);
    expect(describeFailure(new AuthenticationError("no", request, 401))).toMatch(/credentials/);
    expect(describeFailure(new RateLimitedError("slow down", request, 2))).toMatch(/request limit/);
    expect(describeFailure(new RunAbandoned())).toBe("The answer was abandoned.");
    expect(describeFailure(new Error("x"))).toBe(
      "Something went wrong while answering. Please try again.",
    );
  });

  it("says a refused request in one sentence, leaving the call and the ids to the log", () => {
    const refused = new BadRequestError(
      "content must not contain tool markup",
      { method: "POST", path: "/v1/thread/th_8f2a91/messages" },
      400,
    );
    const sentence = describeFailure(refused);
    expect(sentence).toBe(
      "The assistant service refused this request, so this message was not answered; the bot's log says why.",
    );
    for (const detail of ["POST", "/v1", "th_8f2a91", "400", "tool markup"]) {
      expect(sentence).not.toContain(detail);
    }
    expect(errorSummary(refused)).toEqual({
      type: "BadRequestError",
      kind: "bad_request",
      status: 400,
      method: "POST",
      path: "/v1/thread/th_8f2a91/messages",
      message: refused.message,
    });
    expect(refused.message).toContain("tool markup");
  });
});
