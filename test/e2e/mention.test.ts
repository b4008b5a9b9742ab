import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CHANNEL, type Harness, startHarness, USER } from "../support/bridge-harness.js";

let h: Harness;
beforeEach(async () => {
  h = await startHarness();
});
afterEach(async () => {
  await h.close();
});

describe("a mention in a channel", () => {
  it("is answered in its thread, ending with the run's output exactly", async () => {
    const answer = "## Plan\n\n- **one**\n- two\n\n```ts\nconst x = 1;\n```\n\nDone.";
    h.sim.control.enqueueAnswer({ text: answer, modelUsed: "max" });
    const { threadTs, response } = await h.mention("<@UBOT> what is the plan?");
    expect(response.status).toBe(200);
    const transcript = await h.settled(CHANNEL, threadTs);
    expect(transcript).toHaveLength(1);
    expect(transcript[0]).toContain(answer);
    const posted = h.serviceRequests("POST", /\/messages$/);
    expect(posted.map((p) => p.body)).toEqual([{ content: "what is the plan?" }]);
    const runs = h.serviceRequests("POST", /\/runs$/);
    expect(runs).toHaveLength(1);
    expect(Object.keys(runs[0]?.body as object)).toEqual(["triggerMessageId"]);
    expect(h.slack.rateLimited).toBe(0);
    void USER;
  });
});
