import { LogLevel, WebClient } from "@slack/web-api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeSlack, startFakeSlack } from "../../../tools/fake-slack/server.js";

let fake: FakeSlack;
let web: WebClient;

beforeAll(async () => {
  fake = await startFakeSlack();
  fake.seedUser({ id: "U1", name: "alice" });
  web = new WebClient("xoxb-views-test", {
    slackApiUrl: fake.apiUrl,
    retryConfig: { retries: 0 },
    logLevel: LogLevel.ERROR,
  });
});
afterAll(() => fake.close());

const section = { type: "section", text: { type: "mrkdwn", text: "hi" } };
const input = {
  type: "input",
  block_id: "b",
  label: { type: "plain_text", text: "Token" },
  element: { type: "plain_text_input", action_id: "a" },
};
const modal = (more: Record<string, unknown> = {}) => ({
  type: "modal",
  title: { type: "plain_text", text: "Link your token" },
  submit: { type: "plain_text", text: "Link" },
  blocks: [input],
  ...more,
});

/** Slack's error code for views.open with this trigger and view, or "ok". */
async function open(trigger: string, view: Record<string, unknown>): Promise<string> {
  try {
    await web.apiCall("views.open", { trigger_id: trigger, view });
    return "ok";
  } catch (error) {
    return (error as { data?: { error?: string } }).data?.error ?? "thrown";
  }
}

async function publish(user: string, view: Record<string, unknown>): Promise<string> {
  try {
    await web.apiCall("views.publish", { user_id: user, view });
    return "ok";
  } catch (error) {
    return (error as { data?: { error?: string } }).data?.error ?? "thrown";
  }
}

describe("the fake's views", () => {
  it("opens a valid modal once per trigger", async () => {
    expect(await open("t-1", modal())).toBe("ok");
    expect(await open("t-1", modal())).toBe("exchanged_trigger_id");
    expect(await open("", modal())).toBe("invalid_trigger_id");
  });

  it("refuses a modal Slack could not show", async () => {
    expect(await open("t-2", modal({ type: "home" }))).toBe("invalid_arguments");
    const tooMany = Array.from({ length: 101 }, () => section);
    expect(await open("t-3", modal({ blocks: tooMany }))).toBe("invalid_arguments");
    const longTitle = { type: "plain_text", text: "x".repeat(25) };
    expect(await open("t-4", modal({ title: longTitle }))).toBe("invalid_arguments");
    expect(await open("t-5", modal({ submit: undefined }))).toBe("invalid_arguments");
    // A refused view leaves its trigger unused.
    expect(await open("t-5", modal())).toBe("ok");
  });

  it("publishes a person's Home within 100 blocks, and refuses more or another type", async () => {
    const blocks = Array.from({ length: 100 }, () => section);
    expect(await publish("U1", { type: "home", blocks })).toBe("ok");
    expect(await publish("U1", { type: "home", blocks: [...blocks, section] })).toBe(
      "invalid_arguments",
    );
    expect(await publish("U1", { type: "modal", blocks })).toBe("invalid_arguments");
    expect(await publish("U404", { type: "home", blocks })).toBe("user_not_found");
    expect(fake.viewState.published).toHaveLength(1);
  });
});
