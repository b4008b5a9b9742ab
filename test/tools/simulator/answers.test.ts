import { afterEach, describe, expect, it } from "vitest";
import { generateAnswer, planAnswer } from "../../../tools/simulator/answers.js";
import { type RunningSimulator, startSimulator } from "../../../tools/simulator/server.js";
import { tokenize } from "../../../tools/simulator/tokens.js";
import { ServiceFetch } from "./service-fetch.js";

const QUESTIONS = [
  "How do I retry failed HTTP calls?",
  "What is a good cache TTL?",
  "Explain database migrations",
  "Why is my deploy slow?",
  "",
  "日本語の質問です 🎉",
];

function fencesClosed(text: string): boolean {
  return (text.match(/^```/gmu) ?? []).length % 2 === 0;
}

describe("answer generator", () => {
  it("is deterministic per (question, ordinal) and differs between ordinals", () => {
    for (const q of QUESTIONS) {
      expect(generateAnswer(q, 0)).toBe(generateAnswer(q, 0));
      expect(generateAnswer(q, 1)).not.toBe(generateAnswer(q, 0));
    }
  });

  it("defaults to 400–1600 characters, varying by question", () => {
    const lengths = QUESTIONS.flatMap((q) => [0, 1, 2].map((n) => generateAnswer(q, n).length));
    for (const length of lengths) {
      expect(length).toBeGreaterThanOrEqual(360);
      expect(length).toBeLessThanOrEqual(1600);
    }
    expect(new Set(lengths).size).toBeGreaterThan(5);
  });

  it("writes realistic Markdown: heading, bold, inline code, lists, a closed code block, a link", () => {
    for (const q of QUESTIONS) {
      const text = generateAnswer(q, 0, 1200);
      expect(text).toMatch(/^## \S/u);
      expect(text).toMatch(/\*\*[^*]+\*\*/u);
      expect(text).toMatch(/(^|[^`])`[^`\n]+`/u);
      expect(text).toMatch(/^- \S/mu);
      expect(text).toMatch(/^1\. \S/mu);
      expect(text).toMatch(/^```[a-z]+\n[\s\S]+?\n```$/mu);
      expect(text).toMatch(/\[[^\]]+\]\(https:\/\/example\.com\/[^)]+\)/u);
      expect(fencesClosed(text)).toBe(true);
    }
  });

  it.each([1, 5, 40, 120, 300, 800, 2000, 5000, 20_000])(
    "fits the configured length %i at a whole word, code blocks closed",
    (length) => {
      for (const q of QUESTIONS) {
        for (const ordinal of [0, 3]) {
          const text = generateAnswer(q, ordinal, length);
          expect(text.length).toBeGreaterThan(0);
          if (length >= 40) {
            expect(text.length).toBeLessThanOrEqual(length);
            expect(text.length).toBeGreaterThanOrEqual(length - 30);
          }
          expect(text).not.toMatch(/\s$/u);
          expect(fencesClosed(text)).toBe(true);
        }
      }
    },
  );
});

describe("tokenize", () => {
  it("gives back the text exactly, in pieces of about 4 characters", () => {
    for (const q of QUESTIONS) {
      const text = generateAnswer(q, 0, 3000);
      const chunks = tokenize(text);
      expect(chunks.join("")).toBe(text);
      const average = text.length / chunks.length;
      expect(average).toBeGreaterThan(2);
      expect(average).toBeLessThanOrEqual(4);
    }
  });

  it("keeps multibyte characters whole and leading whitespace with the next word", () => {
    const text = "héllo 👩‍💻 wörld\n\n日本語のテキスト 🎉!";
    const chunks = tokenize(text);
    expect(chunks.join("")).toBe(text);
    expect(chunks).toEqual([
      "héll",
      "o",
      " 👩‍💻",
      " wör",
      "ld",
      "\n\n日本",
      "語のテキ",
      "スト",
      " 🎉!",
    ]);
    const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/u;
    for (const chunk of chunks) expect(chunk).not.toMatch(loneSurrogate);
  });
});

describe("planAnswer", () => {
  it("prefers chunks over text over the generator and carries the script's options", () => {
    const generated = () => "generated answer";
    const defaults = { tokensPerSecond: 50, hang: false };
    expect(planAnswer(undefined, generated, defaults).chunks.join("")).toBe("generated answer");
    expect(planAnswer({ text: "abc def" }, generated, defaults).chunks).toEqual(["abc", " def"]);
    expect(planAnswer({ chunks: ["x", "", "y"], text: "no" }, generated, defaults)).toEqual({
      chunks: ["x", "y"],
      steps: [],
      tokensPerSecond: 50,
      hang: false,
    });
    expect(
      planAnswer({ fail: "bad", tokensPerSecond: 5, modelUsed: "m" }, generated, {
        ...defaults,
        hang: true,
      }),
    ).toMatchObject({
      failure: { error: "bad", afterChars: 0 },
      tokensPerSecond: 5,
      modelUsed: "m",
      hang: true,
    });
    expect(planAnswer({ failAfterChars: 3 }, generated, defaults).failure).toEqual({
      error: "simulated failure",
      afterChars: 3,
    });
  });
});

describe("generated answers over HTTP", () => {
  const sims: RunningSimulator[] = [];
  afterEach(async () => {
    await Promise.all(sims.splice(0).map((s) => s.close()));
  });

  async function answersOf(question: string, runs: number) {
    const sim = await startSimulator({ queueDelayMs: 0, answer: { tokensPerSecond: Infinity } });
    sims.push(sim);
    const api = new ServiceFetch(sim.url);
    const thread = await api.createThread();
    const texts: string[] = [];
    for (let i = 0; i < runs; i++) {
      const message = await api.postMessage(thread.id, question);
      const run = await api.startRun(thread.id, message.id);
      texts.push((await sim.control.waitForRunEnd(run.id)).output?.[0]?.text ?? "");
    }
    return texts;
  }

  it("gives the same question the same answer in a fresh simulator", async () => {
    const first = await answersOf("How do I roll back a deploy?", 2);
    const second = await answersOf("How do I roll back a deploy?", 2);
    expect(second).toEqual(first);
    expect(first[1]).not.toBe(first[0]);
    expect(first[0]).toBe(generateAnswer("How do I roll back a deploy?", 0));
  });
});
