import { LogLevel, WebClient } from "@slack/web-api";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type SlackWebApi, slackWebApi } from "../../src/slack/web-api/web-api.js";
import { type FakeSlack, startFakeSlack } from "../../tools/fake-slack/server.js";

/** The agent surface's Web API adapters over a real WebClient, against the fake Slack. */

let fake: FakeSlack;
let slack: SlackWebApi;
beforeAll(async () => {
  fake = await startFakeSlack();
  slack = slackWebApi(
    new WebClient("xoxb-test-token", {
      slackApiUrl: fake.apiUrl,
      retryConfig: { retries: 0 },
      rejectRateLimitedCalls: true,
      logLevel: LogLevel.ERROR,
    }),
  );
});
afterEach(() => fake.reset());
afterAll(() => fake.close());

const THREAD = { channel_id: "C1", thread_ts: "1.1" };

describe("the agent surface's Web API adapters", () => {
  it("set the status line and clear it", async () => {
    await slack.setThreadStatus({ ...THREAD, status: "is thinking…", loading_messages: ["A"] });
    expect(fake.statusLine("C1", "1.1")).toMatchObject({
      status: "is thinking…",
      loading_messages: ["A"],
    });
    await slack.setThreadStatus({ ...THREAD, status: "" });
    expect(fake.statusLine("C1", "1.1")).toBeUndefined();
  });

  it("create, rest and rename a session, and offer prompts", async () => {
    await slack.setSessionStatus({
      ...THREAD,
      status: "processing",
      title: "Q",
      initiator_user_id: "U1",
    });
    await slack.setSessionStatus({ ...THREAD, status: "active" });
    await slack.renameSession({ ...THREAD, title: "Better" });
    expect(fake.session("C1", "1.1")).toEqual({
      status: "active",
      title: "Better",
      initiator: "U1",
      history: ["processing", "active"],
    });
    await slack.setSuggestedPrompts({
      channel_id: "D1",
      title: "Try",
      prompts: [{ title: "Plan", message: "Plan my week" }],
    });
    expect(fake.suggestedPrompts("D1")).toEqual({
      title: "Try",
      prompts: [{ title: "Plan", message: "Plan my week" }],
    });
  });

  it("notify nobody: mentions in a question or an operator's prompt leave as words", async () => {
    const loud = "<!channel> ask <@U9> and <!subteam^S1|@team>";
    const words = "@channel ask @U9 and @team";
    await slack.setThreadStatus({ ...THREAD, status: loud, loading_messages: [loud] });
    await slack.setSessionStatus({ ...THREAD, status: "processing", title: loud });
    await slack.renameSession({ ...THREAD, title: `${loud}!` });
    await slack.setSuggestedPrompts({
      channel_id: "D1",
      title: loud,
      prompts: [{ title: loud, message: loud }],
    });
    expect(fake.statusLine("C1", "1.1")).toMatchObject({
      status: words,
      loading_messages: [words],
    });
    expect(fake.callsTo("agents.sessions.setStatus")[0]?.args.title).toBe(words);
    expect(fake.session("C1", "1.1")?.title).toBe(`${words}!`);
    expect(fake.suggestedPrompts("D1")).toEqual({
      title: words,
      prompts: [{ title: words, message: words }],
    });
  });
});
