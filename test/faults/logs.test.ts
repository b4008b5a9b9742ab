import { afterEach, describe, expect, it } from "vitest";
import {
  BOT_TOKEN,
  CHANNEL,
  type Harness,
  SERVICE_TOKEN,
  SIGNING_SECRET,
  startHarness,
  stopTurnId,
  USER,
} from "../support/bridge-harness.js";

let h: Harness | undefined;

afterEach(async () => {
  await h?.close();
  h = undefined;
});

const QUESTION = "xyzzy-question what is the plugh plan";
const ANSWER = "plover-answer: the plan is written here in full.";
const SECRETS = [BOT_TOKEN, SIGNING_SECRET, SERVICE_TOKEN];

/** A full run with its rough edges: an outage, a Slack failure, a command, a Stop. */
async function fullRun(x: Harness): Promise<void> {
  x.sim.control.failRequests({
    count: 1,
    status: 500,
    method: "POST",
    pathPattern: /^\/v1\/thread$/,
  });
  x.slack.failNext("chat.update", { status: 500 });
  x.sim.control.enqueueAnswer({ text: ANSWER });
  const first = await x.mention(`<@UBOT> ${QUESTION}`);
  await x.settled(CHANNEL, first.threadTs, 1, 15_000);
  await x.command("model max");
  await x.command("status");
  x.sim.control.enqueueAnswer({ text: `${ANSWER} (again)`, hang: true });
  const second = await x.message({ text: `${QUESTION} again`, thread_ts: first.threadTs });
  void second;
  await x.slack.waitFor((s) =>
    s.replies(CHANNEL, first.threadTs).some((m) => stopTurnId(m) !== undefined),
  );
  const reply = x.slack.replies(CHANNEL, first.threadTs).find((m) => stopTurnId(m));
  await x.pressStop({
    turnId: stopTurnId(reply ?? {}) ?? "",
    user: USER,
    messageTs: reply?.ts ?? "",
  });
  await x.settled(CHANNEL, first.threadTs, 2, 15_000);
}

describe("the logs of a full run", () => {
  it("never carry a token or the signing secret, even at debug", async () => {
    h = await startHarness();
    await fullRun(h);
    const logs = h.logs.join("\n");
    expect(h.logs.length).toBeGreaterThan(20);
    for (const secret of SECRETS) expect(logs).not.toContain(secret);
    expect(logs).not.toMatch(/xoxb-[A-Za-z0-9-]{6,}/);
  });

  it("carry no message text at info level", async () => {
    h = await startHarness({ env: { LOG_LEVEL: "info" } });
    await fullRun(h);
    const logs = h.logs.join("\n");
    expect(logs).toContain("turn accepted");
    expect(logs).toContain("service not answering; retrying");
    for (const secret of SECRETS) expect(logs).not.toContain(secret);
    for (const words of ["xyzzy", "plugh", "plover"]) expect(logs).not.toContain(words);
    expect(h.logs.every((line) => (JSON.parse(line) as { level: number }).level >= 30)).toBe(true);
  });
});
