/**
 * `npm run sandbox` used as a person would: in a real terminal (tmux), typing messages and
 * commands and reading the screen. Each chat runs in its own tmux session of a private tmux
 * server that is killed afterwards.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const dir = mkdtempSync(join(tmpdir(), "sandbox-tmux-"));
/** A private tmux server: its socket lives (and is removed) with the test's folder. */
const SOCKET = join(dir, "tmux.sock");

const tmux = (...args: string[]) =>
  execFileSync("tmux", ["-u", "-S", SOCKET, "-f", "/dev/null", ...args], { encoding: "utf8" });

/** Starts `npm run sandbox -- <flags>` in a new 110×45 terminal that stays after exit. */
function open(session: string, flags: string[]): void {
  const log = join(dir, `${session}.log`);
  const words = ["npm", "run", "--silent", "sandbox", "--", ...flags, "--log", log];
  const command = `${words.map((w) => `'${w.replace(/'/g, `'\\''`)}'`).join(" ")}; echo "[exited $?]"`;
  tmux(
    "new-session",
    "-d",
    "-s",
    session,
    "-x",
    "110",
    "-y",
    "45",
    "-c",
    ROOT,
    command,
    ";",
    "set-option",
    "-t",
    session,
    "remain-on-exit",
    "on",
  );
}

const screen = (session: string) => tmux("capture-pane", "-p", "-J", "-S", "-", "-t", session);
const type = (session: string, text: string) => {
  tmux("send-keys", "-t", session, "-l", text);
  tmux("send-keys", "-t", session, "Enter");
};
/** The sandbox's exit status, which the pane's shell prints once it has ended. */
async function exitStatus(session: string): Promise<string> {
  const shown = await until(session, (s) => /\[exited (\d+)\]/.test(s), "the sandbox to end");
  return /\[exited (\d+)\]/.exec(shown)?.[1] ?? "";
}

/**
 * Processes whose command line mentions `text` (Linux /proc), zombies and the tmux server
 * (whose command line is that of the client that started it) aside.
 */
function processesWith(text: string): string[] {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
        return !/(^|\/)tmux$/.test(argv[0] ?? "") && argv.some((arg) => arg.includes(text));
      } catch {
        return false;
      }
    });
}

/** Polls the screen until `holds` is true for it; fails with the screen after `timeoutMs`. */
async function until(
  session: string,
  holds: (text: string) => boolean,
  what: string,
  timeoutMs = 15_000,
): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const text = screen(session);
    if (holds(text)) return text;
    if (Date.now() > deadline) throw new Error(`waited for ${what}; the screen shows:\n${text}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The chat below the banner (which itself mentions "[Stop]"). */
const thread = (text: string) => {
  const at = text.indexOf("you> @assistant");
  return at === -1 ? "" : text.slice(at);
};

/** The prompt is on the last non-empty row. */
const lastRow = (text: string) => text.trimEnd().split("\n").at(-1) ?? "";

const ANSWER = [
  "Here is the plan for the migration.",
  "",
  "- copy the table",
  "- switch the readers",
  "",
  "That is all, thanks for asking.",
].join("\n");

beforeAll(() => {
  // Both chats start together: their start-up overlaps.
  open("answer", ["--answer", ANSWER, "--tokens-per-second", "8"]);
  open("stop", ["--tokens-per-second", "5", "--length", "3000"]);
});

afterAll(() => {
  try {
    tmux("kill-server");
  } catch {
    // Already gone.
  }
  rmSync(dir, { recursive: true, force: true });
});

describe("npm run sandbox in a terminal", () => {
  it("shows the reply live as it is written, then the final text, and Ctrl-D leaves", async () => {
    await until(
      "answer",
      (s) => s.includes("Assistant bridge sandbox") && lastRow(s) === "you>",
      "the prompt",
      30_000,
    );
    type("answer", "how do we migrate?");

    const interim = await until(
      "answer",
      (s) =>
        thread(s).includes("[Stop]") &&
        thread(s).includes("Here is the plan") &&
        !thread(s).includes("thanks for asking"),
      "a partly written reply with its Stop button",
    );
    expect(interim).toContain("you> @assistant how do we migrate?");
    expect(interim).toContain("Writing…");

    const final = await until(
      "answer",
      (s) => thread(s).includes("· Answered by") && !thread(s).includes("[Stop]"),
      "the finished reply",
    );
    const expected = [
      "assistant> Here is the plan for the migration.",
      "",
      "           - copy the table",
      "           - switch the readers",
      "",
      "           That is all, thanks for asking.",
      "           · Answered by assistant-standard",
      "you>",
    ].join("\n");
    expect(final.replace(/[ ]+\n/g, "\n").trimEnd()).toContain(expected);
    // Redrawn in place: the reply is on screen once, not once per edit.
    expect(final.match(/assistant>/g)).toHaveLength(1);
    expect(final.match(/Here is the plan/g)).toHaveLength(1);

    tmux("send-keys", "-t", "answer", "C-d");
    const closed = await until("answer", (s) => s.includes("Stopped the bot"), "the goodbye line");
    expect(closed).toContain("Stopped the bot, the Slack stand-in and the simulator.");
    expect(await exitStatus("answer")).toBe("0");
    expect(processesWith(join(dir, "answer.log"))).toEqual([]);
  }, 60_000);

  it("/assistant stop stops the answer being written, and /quit leaves", async () => {
    await until("stop", (s) => lastRow(s) === "you>", "the prompt", 30_000);
    type("stop", "tell me everything");
    await until(
      "stop",
      (s) => thread(s).includes("[Stop]") && thread(s).includes("Writing…"),
      "the answer being written",
    );

    type("stop", "/assistant stop");
    const stopped = await until(
      "stop",
      (s) =>
        thread(s).includes("Stopped by @you.") &&
        !thread(s).includes("[Stop]") &&
        lastRow(s) === "you>",
      "the stopped reply",
    );
    expect(stopped).toContain("you> /assistant stop");
    expect(stopped).toContain("(only you) Stopping your answer in this channel…");
    // The reply keeps the part written before the stop, and no more.
    const reply = stopped.slice(stopped.indexOf("assistant>"), stopped.indexOf("Stopped by"));
    expect(reply.length).toBeGreaterThan(20);
    expect(reply.length).toBeLessThan(2_000);

    type("stop", "/quit");
    expect(await exitStatus("stop")).toBe("0");
    expect(processesWith(join(dir, "stop.log"))).toEqual([]);
    expect(screen("stop")).toContain("Stopped the bot, the Slack stand-in and the simulator.");
  }, 60_000);
});
