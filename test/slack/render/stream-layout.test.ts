import { describe, expect, it } from "vitest";
import {
  continuation,
  DEFAULT_STREAM_LIMITS,
  nextText,
  type StreamPart,
  streamableEnd,
} from "../../../src/slack/render/stream-layout.js";

/**
 * Streams `answer` as it grows by `step` characters at a time, the way the reply does: what
 * each message received, and the decorations (fences) each cut added.
 */
function stream(answer: string, step: number, limits = DEFAULT_STREAM_LIMITS) {
  const messages: string[] = [];
  let part: StreamPart = { start: 0, reopen: "", sent: 0 };
  messages.push("");
  for (let written = step; ; written = Math.min(answer.length, written + step)) {
    for (;;) {
      const next = nextText(answer.slice(0, written), part, limits);
      messages[messages.length - 1] += next.append;
      part = { ...part, sent: next.sent };
      if (!next.next) break;
      part = { start: next.next.start, reopen: next.next.reopen, sent: 0 };
      messages.push(next.next.reopen);
    }
    if (written === answer.length) break;
  }
  return { messages, streamed: part.start + part.sent };
}

const fences = (text: string) => (text.match(/^```/gm) ?? []).length;

describe("streamableEnd", () => {
  it("holds back the word being written, and the whitespace after the last word", () => {
    expect(streamableEnd("Hello wor", 0)).toBe(6);
    // A word followed by whitespace may still be followed by more whitespace: it waits too,
    // so that the next chunk begins with a word.
    expect(streamableEnd("Hello world ", 0)).toBe(6);
    expect(streamableEnd("Hello\n\nMore", 0)).toBe(7);
    expect(streamableEnd("Hello\n\n", 0)).toBe(0);
    expect(streamableEnd("H", 0)).toBe(0);
    expect(streamableEnd("Hello wor", 6)).toBe(6);
    expect(streamableEnd("Hello wor", 0, false)).toBe(9);
  });

  it("holds back only the last character of a run too long to wait for (a link)", () => {
    const link = `https://example.com/${"a".repeat(40)}`;
    expect(streamableEnd(`See ${link}`, 0)).toBe(4 + link.length - 1);
    // Once cut inside the run, the rest of it goes the same way.
    expect(streamableEnd(`See ${link}bc`, 4 + link.length)).toBe(4 + link.length + 1);
  });

  it("holds a character outside the basic plane back whole", () => {
    const long = "x".repeat(45);
    expect(streamableEnd(`Done ${long}🎉`, 0)).toBe(5 + long.length);
  });

  it("holds back Slack markup not yet closed on the last line", () => {
    expect(streamableEnd("Tell <!chan", 0, false)).toBe(5);
    expect(streamableEnd("Tell <", 0, false)).toBe(5);
    expect(streamableEnd("Tell <!chan", 0)).toBe(0);
    expect(streamableEnd("a <b> c d", 0)).toBe(8);
  });
});

describe("nextText", () => {
  it("appends what is written but its last word, within the soft limit", () => {
    const part = { start: 0, reopen: "", sent: 0 };
    expect(nextText("The first words of", part, DEFAULT_STREAM_LIMITS)).toEqual({
      append: "The first words ",
      sent: 16,
    });
    expect(nextText("The first words of", { ...part, sent: 16 }, DEFAULT_STREAM_LIMITS)).toEqual({
      append: "",
      sent: 16,
    });
    expect(
      nextText("The first words of", { ...part, sent: 16 }, DEFAULT_STREAM_LIMITS, false),
    ).toEqual({
      append: "of",
      sent: 18,
    });
  });

  it("ends a message past the soft limit at the first line that ends outside code", () => {
    const limits = { softLimit: 40, hardLimit: 1_000 };
    const answer = `${"a".repeat(30)}\n${"b ".repeat(10)}\nnext line here\n`;
    const step = nextText(answer, { start: 0, reopen: "", sent: 0 }, limits);
    expect(step.next).toEqual({ start: 52, reopen: "" });
    expect(step.append).toBe(answer.slice(0, 52));
  });

  it("keeps a code block that crosses the soft limit in one message when it fits", () => {
    const limits = { softLimit: 40, hardLimit: 1_000 };
    const code = `\`\`\`js\n${"let x = 1;\n".repeat(10)}\`\`\`\n`;
    const answer = `${"intro ".repeat(5)}\n${code}after the code\n`;
    const { messages } = stream(answer, 7, limits);
    expect(messages[0]).toBe(`${"intro ".repeat(5)}\n${code}`);
    expect(messages.join("")).toBe(answer.slice(0, messages.join("").length));
  });

  it("closes a code block too long for one message and reopens it in the next", () => {
    const limits = { softLimit: 200, hardLimit: 600 };
    const code = `\`\`\`python\n${Array.from({ length: 80 }, (_, i) => `print(${i})`).join("\n")}\n\`\`\``;
    const answer = `Here it is:\n\n${code}\n\nDone.`;
    const { messages } = stream(answer, 13, limits);
    expect(messages.length).toBeGreaterThan(2);
    for (const message of messages) {
      expect(message.length).toBeLessThanOrEqual(limits.hardLimit);
      expect(fences(message) % 2).toBe(0);
    }
    expect(messages[1]?.startsWith("```python\n")).toBe(true);
    // Without the fences the cuts added, the messages are the answer, in order.
    const undecorated = messages
      .map((m, i) => (i === 0 ? m : m.replace(/^```python\n/, "")))
      .map((m, i, all) => (i < all.length - 1 ? m.replace(/```$/, "") : m))
      .join("");
    expect(answer.startsWith(undecorated)).toBe(true);
    expect(undecorated.length).toBeGreaterThan(answer.length - 10);
  });

  it("cuts a long code block between two of its lines, whatever size the appends came in", () => {
    const limits = { softLimit: 200, hardLimit: 600 };
    const lines = Array.from({ length: 120 }, (_, i) => `const value${i} = ${i};`);
    const answer = `Intro.\n\n\`\`\`ts\n${lines.join("\n")}\n\`\`\`\n`;
    for (let step = 1; step <= 40; step++) {
      const { messages } = stream(answer, step, limits);
      expect(messages.length).toBeGreaterThan(2);
      for (const [i, message] of messages.entries()) {
        // Every code line a message shows is whole: none is split over two messages.
        const code = message.replace(/^```ts\n/, "").replace(/\n```$/, "");
        const shown = code.split("\n").filter((l) => l.startsWith("const"));
        for (const line of shown.slice(0, i === messages.length - 1 ? -1 : undefined)) {
          expect(lines).toContain(line);
        }
        if (i > 0) expect(message.startsWith("```ts\nconst value")).toBe(true);
      }
    }
  });

  it("never lets a message grow past the hard limit, even in one endless line", () => {
    const limits = { softLimit: 100, hardLimit: 400 };
    const answer = `${"word ".repeat(300)}`;
    const { messages } = stream(answer, 50, limits);
    for (const message of messages) expect(message.length).toBeLessThanOrEqual(400);
    expect(messages.join("")).toBe(answer.slice(0, messages.join("").length));
  });
});

describe("continuation", () => {
  it("begins the next message where the stream ended, inside the code block it was in", () => {
    const answer = "Intro\n```sh\necho 1\necho 2\n";
    expect(continuation(answer, { start: 0, reopen: "", sent: 19 })).toEqual({
      start: 19,
      reopen: "```sh\n",
    });
    expect(continuation(answer, { start: 0, reopen: "", sent: 6 })).toEqual({
      start: 6,
      reopen: "",
    });
  });
});
