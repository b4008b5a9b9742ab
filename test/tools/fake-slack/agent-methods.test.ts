import { LogLevel, WebClient } from "@slack/web-api";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_LIMITS } from "../../../tools/fake-slack/limits.js";
import { type FakeSlack, startFakeSlack } from "../../../tools/fake-slack/server.js";
import {
  agentSessionStopped,
  appContextChanged,
  appHomeOpened,
  assistantThreadStarted,
} from "../../../tools/slack-requests.js";

const T0 = 1_700_000_000_000;
let now = T0;
let fake: FakeSlack;
let web: WebClient;

/** A WebClient as the bot builds one, pointed at `fake`. */
const client = (of: FakeSlack) =>
  new WebClient("xoxb-secret", {
    slackApiUrl: of.apiUrl,
    retryConfig: { retries: 0 },
    logLevel: LogLevel.ERROR,
  });

beforeAll(async () => {
  fake = await startFakeSlack({ now: () => now });
  web = client(fake);
});
afterEach(() => {
  now = T0;
  fake.reset();
});
afterAll(() => fake.close());

function failure(call: Promise<unknown>): Promise<string | undefined> {
  return call.then(
    () => undefined,
    (e: { data?: { error?: string }; code?: string }) => e.data?.error ?? e.code,
  );
}

const THREAD = { channel_id: "C1", thread_ts: "1.1" };

describe("the status line (assistant.threads.setStatus)", () => {
  it("shows the status and loading messages until cleared, a reply comes, or two minutes pass", async () => {
    await web.assistant.threads.setStatus({
      ...THREAD,
      status: "is thinking…",
      loading_messages: ["Thinking…", "Reading the thread…"],
    });
    expect(fake.statusLine("C1", "1.1")).toMatchObject({
      status: "is thinking…",
      loading_messages: ["Thinking…", "Reading the thread…"],
    });
    expect(fake.statuses.at(-1)?.loading_messages).toEqual(["Thinking…", "Reading the thread…"]);
    await web.assistant.threads.setStatus({ ...THREAD, status: "" });
    expect(fake.statusLine("C1", "1.1")).toBeUndefined();

    await web.assistant.threads.setStatus({ ...THREAD, status: "is writing…" });
    // An edit is no reply; a post elsewhere neither.
    const { ts } = await web.chat.postMessage({ channel: "C1", text: "top level" });
    await web.chat.update({ channel: "C1", ts: ts as string, text: "edited" });
    expect(fake.statusLine("C1", "1.1")?.status).toBe("is writing…");
    await web.chat.postMessage({ channel: "C1", thread_ts: "1.1", text: "the answer" });
    expect(fake.statusLine("C1", "1.1")).toBeUndefined();

    await web.assistant.threads.setStatus({ ...THREAD, status: "is thinking…" });
    now = T0 + 119_999;
    expect(fake.statusLine("C1", "1.1")).toBeDefined();
    now = T0 + 120_000;
    expect(fake.statusLine("C1", "1.1")).toBeUndefined();
  });

  it("refuses what Slack refuses", async () => {
    const status = (args: Record<string, unknown>) =>
      failure(web.apiCall("assistant.threads.setStatus", args));
    expect(await status({ thread_ts: "1.1", status: "x" })).toBe("channel_not_found");
    expect(await status({ channel_id: "C1", status: "x" })).toBe("invalid_thread_ts");
    expect(await status({ ...THREAD })).toBe("invalid_arguments");
    const eleven = Array.from({ length: 11 }, (_, i) => `line ${i}`);
    expect(await status({ ...THREAD, status: "x", loading_messages: eleven })).toBe(
      "invalid_arguments",
    );
    expect(fake.statuses).toEqual([]);
  });
});

describe("suggested prompts and titles", () => {
  const prompts = [{ title: "Plan", message: "Plan my week" }];

  it("sets a channel's prompts in the agent view, and ignores a call naming a thread", async () => {
    await web.assistant.threads.setSuggestedPrompts({ channel_id: "D1", title: "Try", prompts });
    expect(fake.suggestedPrompts("D1")).toEqual({ title: "Try", prompts });
    await web.assistant.threads.setSuggestedPrompts({
      channel_id: "D2",
      thread_ts: "1.1",
      prompts,
    });
    expect(fake.suggestedPrompts("D2")).toBeUndefined();
    expect(fake.suggestedPrompts("D2", "1.1")).toBeUndefined();
    const five = Array(5).fill(prompts[0]);
    expect(
      await failure(web.assistant.threads.setSuggestedPrompts({ channel_id: "D1", prompts: five })),
    ).toBe("invalid_arguments");
    expect(
      await failure(
        web.assistant.threads.setSuggestedPrompts({
          channel_id: "D1",
          prompts: [{ title: "", message: "m" }],
        }),
      ),
    ).toBe("invalid_arguments");
  });

  it("keeps prompts per thread in the legacy assistant view", async () => {
    const legacy = await startFakeSlack({ assistantView: "assistant" });
    try {
      const api = client(legacy);
      await api.assistant.threads.setSuggestedPrompts({ ...THREAD, prompts });
      expect(legacy.suggestedPrompts("C1", "1.1")?.prompts).toEqual(prompts);
      expect(
        await failure(api.assistant.threads.setSuggestedPrompts({ channel_id: "C1", prompts })),
      ).toBe("invalid_thread_ts");
    } finally {
      await legacy.close();
    }
  });

  it("titles an assistant thread", async () => {
    await web.assistant.threads.setTitle({ ...THREAD, title: "Trip prep" });
    expect(fake.threadTitle("C1", "1.1")).toBe("Trip prep");
    expect(await failure(web.assistant.threads.setTitle({ ...THREAD, title: "" }))).toBe(
      "invalid_arguments",
    );
  });
});

describe("agent sessions", () => {
  it("creates a session with its title and initiator, then changes only its status", async () => {
    await web.agents.sessions.setStatus({
      ...THREAD,
      status: "processing",
      title: "First question",
      initiator_user_id: "U1",
    });
    await web.agents.sessions.setStatus({
      ...THREAD,
      status: "active",
      title: "Ignored",
      initiator_user_id: "U2",
    });
    expect(fake.session("C1", "1.1")).toEqual({
      status: "active",
      title: "First question",
      initiator: "U1",
      history: ["processing", "active"],
    });
    const renamed = await web.agents.sessions.rename({ ...THREAD, title: "Renamed" });
    expect(renamed).toMatchObject({ ok: true, title: "Renamed" });
    expect(fake.session("C1", "1.1")?.title).toBe("Renamed");
  });

  it("refuses what Slack refuses", async () => {
    const set = (args: Record<string, unknown>) =>
      failure(web.apiCall("agents.sessions.setStatus", args));
    expect(await set({ thread_ts: "1.1", status: "active" })).toBe("channel_not_found");
    expect(await set({ ...THREAD, status: "thinking" })).toBe("invalid_arguments");
    expect(await set({ channel_id: "C1", status: "active" })).toBe("invalid_arguments");
    expect(await set({ ...THREAD, status: "active", title: "x".repeat(201) })).toBe(
      "invalid_arguments",
    );
    expect(await failure(web.agents.sessions.rename({ ...THREAD, title: "No session" }))).toBe(
      "session_not_found",
    );
    await web.agents.sessions.setStatus({ ...THREAD, status: "active" });
    expect(await failure(web.agents.sessions.rename({ ...THREAD, title: "" }))).toBe(
      "invalid_arguments",
    );
    expect(await failure(web.agents.sessions.rename({ ...THREAD, title: "y".repeat(201) }))).toBe(
      "invalid_arguments",
    );
  });

  it("shows the stop control only while processing: pressing it makes Slack's event", async () => {
    expect(() => fake.pressSessionStop("C1", "1.1", "U1")).toThrow(/session is absent/);
    await web.agents.sessions.setStatus({ ...THREAD, status: "processing" });
    expect(fake.pressSessionStop("C1", "1.1", "U1")).toMatchObject({
      type: "agent_session_stopped",
      channel: "C1",
      thread_ts: "1.1",
      user: "U1",
      streaming_message_ts: [],
    });
    await web.agents.sessions.setStatus({ ...THREAD, status: "active" });
    expect(() => fake.pressSessionStop("C1", "1.1", "U1")).toThrow(/session is active/);
  });

  it("limits each method at its tier", () => {
    expect(DEFAULT_LIMITS["assistant.threads.setSuggestedPrompts"]).toBe(100);
    expect(DEFAULT_LIMITS["agents.sessions.setStatus"]).toBe(50);
    expect(DEFAULT_LIMITS["agents.sessions.rename"]).toBe(50);
  });
});

describe("agent surface events", () => {
  it("are shaped as Slack sends them", () => {
    expect(agentSessionStopped({ channel: "C1", thread_ts: "1.1", user: "U1" })).toMatchObject({
      type: "agent_session_stopped",
      streaming_message_ts: [],
      event_ts: expect.stringMatching(/^\d+\.\d{6}$/),
    });
    expect(appHomeOpened({ user: "U1", channel: "D1" })).toMatchObject({
      type: "app_home_opened",
      tab: "messages",
    });
    expect(assistantThreadStarted({ user: "U1", channel: "D1", thread_ts: "1.1" })).toMatchObject({
      assistant_thread: { user_id: "U1", channel_id: "D1", thread_ts: "1.1" },
    });
    expect(appContextChanged({ user: "U1", channel: "D1", viewing: "C9" })).toMatchObject({
      context: { entities: [{ type: "slack#/types/channel_id", value: "C9" }] },
    });
  });
});
