import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { say } from "../../sandbox/say.js";
import { startWorkspace, type Workspace } from "../../sandbox/workspace.js";
import { tempFolder } from "../support/temp-folder.js";

let ws: Workspace;

beforeEach(async () => {
  ws = await startWorkspace({
    simulator: { queueDelayMs: 0, answer: { tokensPerSecond: Number.POSITIVE_INFINITY } },
    logPath: join(tempFolder("sandbox-say-"), "sandbox.log"),
  });
});

afterEach(async () => {
  // Answers left hanging by a test need no grace period.
  await ws.close(100);
});

describe("say", () => {
  it("returns the whole answer of a completed run, even when it takes several messages", async () => {
    const paragraph = (i: number) => `Paragraph ${i}: ${"words and more words ".repeat(30).trim()}`;
    const answer = Array.from({ length: 12 }, (_, i) => paragraph(i)).join("\n\n");
    ws.sim.control.enqueueAnswer({ text: answer });
    const result = await say(ws, "tell me a lot", 20_000);
    expect(result).toEqual({ ok: true, answer });
    expect(ws.slack.replies(ws.channel, ws.threadTs ?? "").length).toBeGreaterThan(1);
  });

  it("is not ok when the run fails, and says why", async () => {
    ws.sim.control.enqueueAnswer({ text: "Partial", fail: "the model crashed", failAfterChars: 4 });
    const result = await say(ws, "try", 20_000);
    expect(result.ok).toBe(false);
    expect(result.problem).toBe("The run failed: the model crashed");
  });

  it("gives up after the timeout when the answer never ends", async () => {
    ws.sim.control.enqueueAnswer({ text: "Never done", hang: true });
    const result = await say(ws, "hang", 500);
    expect(result).toMatchObject({
      ok: false,
      problem: "no final answer within 0.5 s (the bot's log says more)",
    });
  });
});
