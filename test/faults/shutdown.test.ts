import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FakeSlack, startFakeSlack } from "../../tools/fake-slack/server.js";
import { type RunningSimulator, startSimulator } from "../../tools/simulator/server.js";
import { hasStopButton } from "../support/bridge-harness.js";
import { type ChildBot, childEnv, mentionChild, startChildBot } from "../support/child-bot.js";
import { tempFolder } from "../support/temp-folder.js";

const CHANNEL = "C0TERM";
const USER = "U0ALICE";

let sim: RunningSimulator;
let slack: FakeSlack;
let databasePath: string;
const children: ChildBot[] = [];

beforeEach(async () => {
  sim = await startSimulator({ queueDelayMs: 10, answer: { tokensPerSecond: 40 } });
  slack = await startFakeSlack();
  databasePath = join(tempFolder("faults-term-"), "bridge.db");
});

afterEach(async () => {
  for (const child of children.splice(0)) await child.kill("SIGKILL");
  await slack.close();
  await sim.close();
});

async function launch(graceSeconds: string): Promise<ChildBot> {
  const child = await startChildBot(
    childEnv({
      slackApiUrl: slack.apiUrl,
      serviceUrl: sim.url,
      databasePath,
      extra: { SHUTDOWN_GRACE_SECONDS: graceSeconds },
    }),
  );
  children.push(child);
  return child;
}

function ask(child: ChildBot, text: string) {
  return mentionChild(child, slack, { text: `<@UBOT> ${text}`, channel: CHANNEL, user: USER });
}

async function settled(threadTs: string): Promise<string[]> {
  await slack.waitFor((s) => {
    const replies = s.replies(CHANNEL, threadTs);
    return replies.length > 0 && replies.every((m) => !hasStopButton(m));
  }, 30_000);
  return slack.threadTranscript(CHANNEL, threadTs);
}

function turnStates(): { state: string; outcome: string | null }[] {
  const db = new Database(databasePath, { readonly: true });
  try {
    return db.prepare("SELECT state, outcome FROM turns ORDER BY created_at, rowid").all() as {
      state: string;
      outcome: string | null;
    }[];
  } finally {
    db.close();
  }
}

const writing = (threadTs: string, text: string) =>
  slack.waitFor((s) => s.threadTranscript(CHANNEL, threadTs).some((t) => t.includes(text)), 30_000);

describe("SIGTERM", () => {
  it("lets the answer being written finish within the grace period, then exits 0", async () => {
    const answer = "First line of a short answer.\nSecond line, and that is all.";
    sim.control.enqueueAnswer({ text: answer });
    const child = await launch("10");
    const { ts } = await ask(child, "short one");
    await writing(ts, "First line");
    const exit = await child.kill("SIGTERM");
    expect(exit).toEqual({ code: 0, signal: null });
    expect(slack.threadTranscript(CHANNEL, ts)).toEqual([expect.stringContaining(answer)]);
    expect(slack.replies(CHANNEL, ts).every((m) => !hasStopButton(m))).toBe(true);
    expect(turnStates()).toEqual([{ state: "finished", outcome: "completed" }]);
  });

  it("records what cannot finish in time, and the next start completes it without a second run", async () => {
    const long = Array.from({ length: 10 }, (_, i) => `Line ${i + 1} of a slow answer.`).join("\n");
    sim.control.enqueueAnswer({ text: long });
    sim.control.enqueueAnswer({ text: "The question asked while stopping." });
    const child = await launch("1");
    const { ts } = await ask(child, "long one");
    await writing(ts, "Line 1 of");
    const exiting = child.kill("SIGTERM");
    await child.waitForLog(/"msg":"stopping: finishing answers in progress"/);
    // Slack keeps delivering while the bot stops: the message is recorded, not answered yet.
    const late = await ask(child, "asked during shutdown");
    expect(late.response.status).toBe(200);
    expect(await exiting).toEqual({ code: 0, signal: null });
    expect(sim.control.counts()).toMatchObject({ messages: 1, runs: 1 });
    expect(turnStates().map((t) => t.state)).toEqual(["run_started", "received"]);
    expect(child.logs.some((l) => l.includes('"msg":"turn left for the next start"'))).toBe(true);
    expect(child.logs.some((l) => l.includes('"msg":"turn recorded for the next start"'))).toBe(
      true,
    );

    const next = await launch("1");
    expect(await settled(ts)).toEqual([expect.stringContaining(long)]);
    expect(await settled(late.ts)).toEqual([
      expect.stringContaining("The question asked while stopping."),
    ]);
    expect(sim.control.counts()).toEqual({ threads: 2, messages: 2, runs: 2 });
    // The bot holds the file while it runs: read it once it has stopped.
    expect(await next.kill("SIGTERM")).toEqual({ code: 0, signal: null });
    expect(turnStates().map((t) => t.outcome)).toEqual(["completed", "completed"]);
  });
});
