/**
 * `/assistant` end to end: the real Bolt app (HTTP mode, signed requests) against the fake
 * Slack and the simulator. Every row of the command table, every malformed argument, the
 * settings as the run-start bodies the simulator received, and their survival of a restart.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { COMMANDS } from "../../src/controls/command-table.js";
import type { BotResponse } from "../../tools/slack-requests.js";
import { CHANNEL, type Harness, startHarness, USER } from "../support/bridge-harness.js";

const BOB = "U0BOB";
const OTHER_CHANNEL = "C0OTHER";
const DM = "D0ALICE";

let h: Harness;
beforeEach(async () => {
  h = await startHarness();
  h.sim.control.setDefaultAnswer({ text: "A short answer.", tokensPerSecond: Infinity });
});
afterEach(async () => {
  await h.close();
});

/** `/assistant <text>`: checks the acknowledgement is an ephemeral answer within 3 s. */
async function command(
  text: string,
  fields: { channel?: string; user?: string } = {},
): Promise<string> {
  const response: BotResponse = await h.command(text, fields);
  expect(response.status).toBe(200);
  expect(response.ms).toBeLessThan(3_000);
  const json = response.json as { response_type?: string; text?: string };
  expect(json.response_type).toBe("ephemeral");
  expect(typeof json.text).toBe("string");
  return json.text ?? "";
}

/** Asks a question and waits for its finished reply; returns the run-start body and reply. */
async function ask(
  question: string,
  fields: { channel?: string; user?: string; dm?: boolean } = {},
): Promise<{ body: Record<string, unknown>; reply: string }> {
  const channel = fields.channel ?? CHANNEL;
  const user = fields.user ?? USER;
  const before = h.serviceRequests("POST", /^\/v1\/thread\/[^/]+\/runs$/).length;
  const { threadTs } = fields.dm
    ? await h.message({ text: question, channel, user, channel_type: "im" })
    : await h.mention(`<@UBOT> ${question}`, { channel, user });
  const transcript = await h.settled(channel, threadTs);
  const starts = h.serviceRequests("POST", /^\/v1\/thread\/[^/]+\/runs$/);
  expect(starts).toHaveLength(before + 1);
  const start = starts.at(-1);
  const threadId = start?.path.split("/")[3] ?? "";
  const posted = h.sim.control.messages(threadId).filter((m) => m.content === question);
  expect(posted).toHaveLength(1);
  const body = start?.body as Record<string, unknown>;
  expect(body.triggerMessageId).toBe(posted[0]?.id);
  return { body, reply: transcript.join("\n") };
}

const usageLines = COMMANDS.map((row) => row.usage);

describe("/assistant help", () => {
  it.each(["", "help", "  HELP  "])(
    "%j answers with the usage of every command and the settings in force",
    async (text) => {
      const answer = await command(text);
      for (const usage of usageLines) expect(answer).toContain(usage);
      expect(answer).toContain("model *default*, effort *default*, steps *default*");
      expect(answer).not.toContain(":warning:");
    },
  );

  it("lists this person's settings in this channel", async () => {
    await command("model max");
    await command("steps 12");
    expect(await command("help")).toContain("model *max*, effort *default*, steps *12*");
    expect(await command("", { user: BOB })).toContain(
      "model *default*, effort *default*, steps *default*",
    );
  });
});

describe("settings", () => {
  it("each value of model, effort and steps is sent exactly on the next run start", async () => {
    expect(await command("model max")).toContain("Model set to *max*");
    expect(await command("effort high")).toContain("Reasoning effort set to *high*");
    expect(await command("steps 42")).toContain("Step limit set to *42*");
    let run = await ask("first question");
    expect(Object.keys(run.body)).toEqual([
      "triggerMessageId",
      "modelOverride",
      "reasoning_effort",
      "maxSteps",
    ]);
    expect(run.body).toMatchObject({
      modelOverride: "max",
      reasoning_effort: "high",
      maxSteps: 42,
    });
    // Every finished reply says which model answered.
    expect(run.reply).toContain("Answered by assistant-max");

    await command("model flash");
    await command("effort none");
    await command("steps 1");
    run = await ask("second question");
    expect(run.body).toEqual({
      triggerMessageId: run.body.triggerMessageId,
      modelOverride: "flash",
      reasoning_effort: "none",
      maxSteps: 1,
    });
    expect(run.reply).toContain("Answered by assistant-flash");

    await command("effort low");
    await command("steps 500");
    run = await ask("third question");
    expect(run.body).toEqual({
      triggerMessageId: run.body.triggerMessageId,
      modelOverride: "flash",
      reasoning_effort: "low",
      maxSteps: 500,
    });

    await command("effort medium");
    expect(await command("model default")).toContain("Model back to the default");
    expect(await command("steps default")).toContain("Step limit back to the default");
    run = await ask("fourth question");
    expect(run.body).toEqual({
      triggerMessageId: run.body.triggerMessageId,
      reasoning_effort: "medium",
    });

    expect(await command("effort default")).toContain(
      "Now: model *default*, effort *default*, steps *default*",
    );
    run = await ask("fifth question");
    expect(run.body).toEqual({ triggerMessageId: run.body.triggerMessageId });
    expect(run.reply).toContain("Answered by assistant-standard");

    // Command answers are ephemeral: nothing was posted in the channel but the replies.
    expect(h.slack.callsTo("chat.postMessage").every((c) => c.args.thread_ts !== undefined)).toBe(
      true,
    );
  });

  it("belong to one person in one channel, a DM being a channel of its own", async () => {
    await command("model max");
    await command("effort low", { channel: DM });
    await command("steps 3", { channel: DM });

    expect((await ask("alice here", {})).body).toMatchObject({ modelOverride: "max" });
    expect(Object.keys((await ask("bob here", { user: BOB })).body)).toEqual(["triggerMessageId"]);
    expect(Object.keys((await ask("elsewhere", { channel: OTHER_CHANNEL })).body)).toEqual([
      "triggerMessageId",
    ]);
    const dm = await ask("in a DM", { channel: DM, dm: true });
    expect(dm.body).toEqual({
      triggerMessageId: dm.body.triggerMessageId,
      reasoning_effort: "low",
      maxSteps: 3,
    });
  });

  it("survive a restart and are read when the run starts", async () => {
    await command("model flash");
    await command("effort high");
    await command("steps 250");
    await h.restart();
    expect(await command("status")).toContain("model *flash*, effort *high*, steps *250*");
    const run = await ask("after the restart");
    expect(run.body).toEqual({
      triggerMessageId: run.body.triggerMessageId,
      modelOverride: "flash",
      reasoning_effort: "high",
      maxSteps: 250,
    });
  });
});

describe("malformed arguments", () => {
  const cases: [string, RegExp][] = [
    ["model gpt", /model must be flash, max or default/i],
    ["model", /`model` needs a value/],
    ["model flash please", /`\/assistant model flash\|max\|default` takes no more words/],
    ["effort extreme", /effort must be none, low, medium, high or default/i],
    ["effort", /`effort` needs a value/],
    ["steps 0", /steps must be from 1 to 500/i],
    ["steps 501", /steps must be from 1 to 500/i],
    ["steps 9999", /steps must be from 1 to 500/i],
    ["steps abc", /steps must be a whole number from 1 to 500/i],
    ["steps -1", /steps must be a whole number/i],
    ["steps 1.5", /steps must be a whole number/i],
    ["steps", /`steps` needs a value/],
    ["steps 5 extra", /takes no more words/],
    ["help me", /`\/assistant help` takes no more words/],
    ["status please", /`\/assistant status` takes no more words/],
    ["stop everything", /`\/assistant stop` takes no more words/],
    ["frobnicate", /“frobnicate” is not a command I know/],
  ];

  it.each(cases)("%j gets the usage saying what was wrong", async (text, problem) => {
    const answer = await command(text);
    expect(answer).toMatch(/^:warning: /);
    expect(answer).toMatch(problem);
    for (const usage of usageLines) expect(answer).toContain(usage);
  });

  it("change nothing", async () => {
    await command("model max");
    await command("effort low");
    await command("steps 7");
    for (const [text] of cases) await command(text);
    expect(await command("status")).toContain("model *max*, effort *low*, steps *7*");
    const run = await ask("still the same?");
    expect(run.body).toEqual({
      triggerMessageId: run.body.triggerMessageId,
      modelOverride: "max",
      reasoning_effort: "low",
      maxSteps: 7,
    });
  });
});

describe("/assistant status and stop with nothing going on", () => {
  it("status shows the settings and says there is nothing in progress", async () => {
    await command("effort medium");
    const answer = await command("status");
    expect(answer).toContain("model *default*, effort *medium*, steps *default*");
    expect(answer).toContain("You have no answers in progress here.");
  });

  it("stop says there is nothing to stop and calls nothing", async () => {
    await ask("done already");
    expect(await command("stop")).toBe(
      "Nothing of yours is being answered in this channel right now.",
    );
    expect(h.serviceRequests("POST", /\/stop$/)).toEqual([]);
  });
});
