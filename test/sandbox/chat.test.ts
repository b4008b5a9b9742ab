/**
 * The chat without a terminal (input piped in, output read back): what it posts to the
 * bot, and the settled transcript it prints. The real bot runs against the fake Slack and
 * the simulator in this process.
 */
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runChat } from "../../sandbox/chat.js";
import { startWorkspace, type Workspace } from "../../sandbox/workspace.js";
import { tempFolder } from "../support/temp-folder.js";

let ws: Workspace;

beforeEach(async () => {
  ws = await startWorkspace({
    simulator: { queueDelayMs: 0, answer: { tokensPerSecond: 400 } },
    logPath: join(tempFolder("sandbox-chat-"), "sandbox.log"),
  });
});

afterEach(async () => {
  // Answers left hanging by a test need no grace period.
  await ws.close(100);
});

function piped(lines: string[], options: { end?: boolean; signal?: AbortSignal } = {}) {
  const input = new PassThrough();
  const output = new PassThrough();
  let printed = "";
  output.on("data", (chunk) => {
    printed += String(chunk);
  });
  const done = runChat({
    workspace: ws,
    input,
    output,
    terminal: false,
    frameMs: 10,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  input.write(lines.map((line) => `${line}\n`).join(""));
  if (options.end ?? true) input.end();
  return { done, input, printed: () => printed };
}

describe("the chat without a terminal", () => {
  it("posts the first line as a mention and later ones in its thread, then prints the thread", async () => {
    ws.sim.control.enqueueAnswer({ text: "First answer." });
    ws.sim.control.enqueueAnswer({ text: "Second answer." });
    const chat = piped(["what is <this> & that?", "and then?"]);
    await chat.done;

    const threadTs = ws.threadTs ?? "";
    const thread = ws.slack
      .messages(ws.channel)
      .filter((m) => m.thread_ts === threadTs || m.ts === threadTs);
    const person = thread.filter((m) => m.bot_id === undefined);
    expect(person.map((m) => [m.ts === threadTs, m.text])).toEqual([
      [true, "<@UBOT> what is &lt;this&gt; &amp; that?"],
      [false, "and then?"],
    ]);
    const posted = ws.sim.control.requests.filter(
      (r) => r.method === "POST" && r.path.endsWith("/messages"),
    );
    expect(posted.map((r) => r.body)).toEqual([
      { content: "what is <this> & that?" },
      { content: "and then?" },
    ]);
    expect(ws.sim.control.counts().threads).toBe(1);

    expect(chat.printed()).toBe(
      [
        "you> @assistant what is <this> & that?",
        "you> and then?",
        "assistant> First answer.",
        "           · Answered by assistant-standard",
        "assistant> Second answer.",
        "           · Answered by assistant-standard",
        "",
      ].join("\n"),
    );
  });

  it("sends /assistant lines to the slash command and prints the ephemeral answer", async () => {
    const chat = piped(["/assistant effort high", "/assistant status", "/nope"]);
    await chat.done;
    const out = chat.printed();
    expect(out).toContain("you> /assistant effort high\n(only you) Reasoning effort set to high");
    expect(out).toContain(
      "you> /assistant status\n(only you) Your settings in this channel: model default, effort high",
    );
    expect(out).toContain(
      "(sandbox) /nope is not a command here: try /assistant help, /stop or /quit.",
    );
    expect(ws.slack.messages(ws.channel)).toEqual([]);
  });

  it("/stop presses the Stop button of the reply being written", async () => {
    ws.sim.control.enqueueAnswer({ text: "It goes on and on", hang: true });
    const chat = piped(["keep going"], { end: false });
    await ws.slack.waitFor((s) =>
      s.replies(ws.channel, ws.threadTs ?? "").some((m) => m.text.includes("It goes on")),
    );
    chat.input.end("/stop\n");
    await chat.done;
    // Then the reply's detail lines (the model), whatever they are.
    expect(chat.printed()).toMatch(
      /^you> @assistant keep going\nassistant> It goes on and on\n {11}· Stopped by @you\.\n/,
    );
    const stops = ws.sim.control.requests.filter((r) => /^\/v1\/runs\/[^/]+\/stop$/.test(r.path));
    expect(stops).toHaveLength(1);
  });

  it("leaves at once when told to, printing the reply as it stands", async () => {
    ws.sim.control.enqueueAnswer({ text: "Half", hang: true });
    const leave = new AbortController();
    const chat = piped(["question"], { end: false, signal: leave.signal });
    await ws.slack.waitFor((s) =>
      s.replies(ws.channel, ws.threadTs ?? "").some((m) => m.text.includes("Half")),
    );
    leave.abort();
    await chat.done;
    expect(chat.printed()).toBe(
      ["you> @assistant question", "assistant> Half", "           · Writing…  [Stop]", ""].join(
        "\n",
      ),
    );
  });
});
