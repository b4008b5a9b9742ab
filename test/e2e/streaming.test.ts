import { afterEach, describe, expect, it } from "vitest";
import type { FakeSlack, RecordedCall } from "../../tools/fake-slack/server.js";
import { DEFAULT_TEAM } from "../../tools/slack-events.js";
import {
  CHANNEL,
  type Harness,
  hasStopButton,
  startHarness,
  USER,
} from "../support/bridge-harness.js";
import { SkippableClock } from "../support/manual-clock.js";

let h: Harness | undefined;

async function harness(options: Parameters<typeof startHarness>[0] = {}): Promise<Harness> {
  h = await startHarness({ ...options, env: { SLACK_STREAMING: "auto", ...options.env } });
  return h;
}

afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** The Markdown each of the bot's replies in the thread shows, in order. */
function bodies(slack: FakeSlack, threadTs: string): string[] {
  return slack.replies(CHANNEL, threadTs).map((m) => {
    const block = (m.blocks ?? []).find((b) => b.type === "markdown") as
      | { text?: string }
      | undefined;
    return block?.text ?? "";
  });
}

/** The Markdown a stream call carried. */
function streamedText(call: RecordedCall): string {
  const chunks = (call.args.chunks ?? []) as { type: string; text?: string }[];
  return chunks.map((c) => (c.type === "markdown_text" ? (c.text ?? "") : "")).join("");
}

const ANSWER = Array.from(
  { length: 12 },
  (_, i) => `${i + 1}. Point number ${i + 1} of the answer.`,
).join("\n");

describe("native streaming", () => {
  it("streams an answer into one message to the asker and ends it with the exact text", async () => {
    const x = await harness({ simulator: { answer: { tokensPerSecond: 60 } } });
    x.sim.control.enqueueAnswer({ text: ANSWER, modelUsed: "max" });
    const { threadTs } = await x.mention("<@UBOT> list them");
    const transcript = await x.settled(CHANNEL, threadTs);
    expect(transcript).toHaveLength(1);
    expect(bodies(x.slack, threadTs)).toEqual([ANSWER]);
    expect(transcript[0]).toContain("max");
    const [start] = x.slack.callsTo("chat.startStream");
    expect(start?.args).toMatchObject({
      channel: CHANNEL,
      thread_ts: threadTs,
      recipient_user_id: USER,
      recipient_team_id: DEFAULT_TEAM,
    });
    // The start waited for the first words and carried them; the rest went out as the run
    // wrote them, in several appends, before the end.
    expect(streamedText(start as RecordedCall)).toMatch(/^1/);
    const appends = x.slack.callsTo("chat.appendStream").filter((c) => c.ok);
    expect(appends.length).toBeGreaterThan(1);
    const streamed = [start as RecordedCall, ...appends].map(streamedText).join("");
    expect(ANSWER.startsWith(streamed)).toBe(true);
    const [message] = x.slack.replies(CHANNEL, threadTs);
    expect(message?.history[0] && hasStopButton(message.history[0])).toBe(true);
    expect(hasStopButton(message ?? {})).toBe(false);
    expect(x.slack.streamState(CHANNEL, message?.ts ?? "")?.state).toBe("stopped");
    expect(x.slack.callsTo("chat.stopStream")[0]?.args.metadata).toMatchObject({
      event_payload: { part: 0 },
    });
    expect(x.slack.callsTo("chat.postMessage")).toEqual([]);
    expect(x.slack.calls.filter((c) => !c.ok)).toEqual([]);
  });

  it("edits the answer instead when streaming is off", async () => {
    const x = await harness({ env: { SLACK_STREAMING: "off" } });
    x.sim.control.enqueueAnswer({ text: ANSWER });
    const { threadTs } = await x.mention("<@UBOT> list them");
    await x.settled(CHANNEL, threadTs);
    expect(bodies(x.slack, threadTs)).toEqual([ANSWER]);
    expect(x.slack.callsTo("chat.postMessage")).toHaveLength(1);
    expect(x.slack.callsTo("chat.update").length).toBeGreaterThan(0);
    expect(x.slack.calls.filter((c) => c.method.endsWith("Stream"))).toEqual([]);
  });

  it("edits later answers once the Tier 2 budget of stream starts is spent, every answer exact", async () => {
    const x = await harness({
      env: { SLACK_STREAM_STARTS_PER_MINUTE: "1" },
      simulator: { answer: { tokensPerSecond: 100 } },
    });
    const answers = ["First answer, streamed.", "Second answer, edited.", "Third answer, edited."];
    const threads: string[] = [];
    for (const text of answers) {
      x.sim.control.enqueueAnswer({ text });
      threads.push((await x.mention(`<@UBOT> ${text}`, { channel: CHANNEL })).threadTs);
      await x.settled(CHANNEL, threads.at(-1) as string);
    }
    expect(threads.map((t) => bodies(x.slack, t))).toEqual(answers.map((a) => [a]));
    const started = x.slack.callsTo("chat.startStream").map((c) => c.args.thread_ts);
    const posted = x.slack.callsTo("chat.postMessage").map((c) => c.args.thread_ts);
    expect(started).toEqual([threads[0]]);
    expect(posted).toEqual([threads[1], threads[2]]);
    expect(x.slack.rateLimited).toBe(0);
  });

  it("continues a long answer in a new stream before the size cap, closing and reopening the code block it cuts", {
    timeout: 40_000,
  }, async () => {
    const x = await harness();
    const intro = Array.from(
      { length: 80 },
      (_, i) => `Intro sentence ${i} says a little more.`,
    ).join(" ");
    const code = `\`\`\`ts\n${Array.from({ length: 400 }, (_, i) => `const value${i} = ${i};`).join("\n")}\n\`\`\``;
    const outro = Array.from({ length: 80 }, (_, i) => `Closing remark ${i} of the answer.`).join(
      "\n",
    );
    const answer = `${intro}\n\n${code}\n\n${outro}`;
    expect(code.length).toBeGreaterThan(8_000);
    expect(code.length).toBeLessThan(11_000);
    x.sim.control.enqueueAnswer({ text: answer });
    const { threadTs } = await x.mention("<@UBOT> write a lot");
    await x.settled(CHANNEL, threadTs, 1, 30_000);
    // While it streamed, the first message ended by closing the code block, the next reopened it.
    // (A start carries what had arrived when it went, maybe only the reopened fence: the rest
    // of a message's text is in its appends.)
    const starts = x.slack.callsTo("chat.startStream");
    expect(starts.length).toBeGreaterThanOrEqual(2);
    const replies = x.slack.replies(CHANNEL, threadTs);
    const streamedInto = (index: number) =>
      [
        starts[index],
        ...x.slack.callsTo("chat.appendStream").filter((c) => c.args.ts === replies[index]?.ts),
      ]
        .map((c) => streamedText(c as RecordedCall))
        .join("");
    expect(streamedInto(1).startsWith("```ts\nconst value")).toBe(true);
    const intoFirst = streamedInto(0);
    expect(intoFirst.endsWith("\n```")).toBe(true);
    expect(intoFirst.length).toBeLessThanOrEqual(12_000);
    expect(x.slack.calls.filter((c) => !c.ok)).toEqual([]);
    // The end is exact: the parts, joined, are the answer; each closes what it opens.
    const parts = bodies(x.slack, threadTs);
    expect(parts.join("\n")).toBe(answer);
    for (const part of parts) {
      expect(part.length).toBeLessThanOrEqual(12_000);
      expect((part.match(/^```/gm) ?? []).length % 2).toBe(0);
    }
  });

  it("renews a stream the run leaves idle, so that Slack does not end it", async () => {
    const clock = new SkippableClock();
    const x = await harness({ clock, slack: { now: () => clock.now() } });
    const written = "Let me look into this for a while ";
    x.sim.control.enqueueAnswer({ text: written, hang: true });
    const { threadTs } = await x.mention("<@UBOT> take your time");
    // Everything written is in the stream, its last character too (held back while the text
    // grew): from here on the stream is idle.
    const streamed = (s: FakeSlack) =>
      [...s.callsTo("chat.startStream"), ...s.callsTo("chat.appendStream")]
        .map(streamedText)
        .join("");
    await x.slack.waitFor((s) => streamed(s) === written);
    const ts = x.slack.replies(CHANNEL, threadTs)[0]?.ts ?? "";
    const appendsBefore = x.slack.callsTo("chat.appendStream").length;
    clock.skip(4 * 60_000 + 1_000);
    await x.slack.waitFor((s) => s.callsTo("chat.appendStream").length > appendsBefore);
    clock.skip(2 * 60_000);
    // Six minutes after the last words, the stream still streams.
    expect(x.slack.streamState(CHANNEL, ts)?.state).toBe("streaming");
    await x.command("stop");
    await x.settled(CHANNEL, threadTs);
    expect(bodies(x.slack, threadTs)).toEqual([written]);
    expect(x.slack.threadTranscript(CHANNEL, threadTs)[0]).toContain("Stopped by");
    expect(x.slack.calls.filter((c) => !c.ok)).toEqual([]);
  });

  it("stops the run when the person stops the stream in Slack, keeping what was written", async () => {
    const x = await harness({ simulator: { answer: { tokensPerSecond: 8 } } });
    x.sim.control.enqueueAnswer({ text: "word ".repeat(400) });
    const { threadTs } = await x.mention("<@UBOT> go on and on");
    await x.slack.waitFor((s) =>
      s.callsTo("chat.appendStream").some((c) => streamedText(c).includes("word")),
    );
    const ts = x.slack.replies(CHANNEL, threadTs)[0]?.ts ?? "";
    expect(x.slack.stopStreamAsUser(CHANNEL, ts)).toBe(true);
    await x.settled(CHANNEL, threadTs);
    expect(x.serviceRequests("POST", /^\/v1\/runs\/[^/]+\/stop$/)).toHaveLength(1);
    const [run] = x.sim.control.runs();
    expect(run?.status).toBe("canceled");
    const output = run?.output?.[0]?.text ?? "";
    expect(output).not.toBe("");
    expect(bodies(x.slack, threadTs)).toEqual([output]);
    expect(x.slack.threadTranscript(CHANNEL, threadTs)[0]).toContain(`Stopped by <@${USER}>`);
    expect(x.slack.replies(CHANNEL, threadTs)).toHaveLength(1);
  });

  it("after a restart in the middle of a stream, ends the answer in the same message", async () => {
    const x = await harness({ simulator: { answer: { tokensPerSecond: 60 } } });
    const answer = Array.from({ length: 40 }, (_, i) => `Sentence ${i} of a slow answer.`).join(
      " ",
    );
    x.sim.control.enqueueAnswer({ text: answer });
    const { threadTs } = await x.mention("<@UBOT> slowly please");
    await x.slack.waitFor((s) =>
      s.callsTo("chat.appendStream").some((c) => streamedText(c).includes("Sentence 1 ")),
    );
    const ts = x.slack.replies(CHANNEL, threadTs)[0]?.ts ?? "";
    await x.restart({ SHUTDOWN_GRACE_SECONDS: "0" });
    expect(x.logs.some((l) => l.includes('"msg":"resuming unfinished turns"'))).toBe(true);
    await x.settled(CHANNEL, threadTs, 1, 20_000);
    expect(x.slack.replies(CHANNEL, threadTs)).toHaveLength(1);
    expect(bodies(x.slack, threadTs)).toEqual([answer]);
    expect(x.slack.callsTo("chat.startStream")).toHaveLength(1);
    expect(x.slack.callsTo("chat.postMessage")).toEqual([]);
    // The new process stopped the stream it found open, and edited it to the end.
    expect(x.slack.callsTo("chat.stopStream").map((c) => c.args.ts)).toContain(ts);
    expect(x.slack.streamState(CHANNEL, ts)?.state).toBe("stopped");
    expect(x.serviceRequests("POST", /^\/v1\/thread\/[^/]+\/runs$/)).toHaveLength(1);
  });
});
