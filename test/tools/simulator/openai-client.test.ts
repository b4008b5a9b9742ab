import OpenAI from "openai";
import type {
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionCreateParamsStreaming,
} from "openai/resources/chat/completions";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type RunningSimulator, startSimulator } from "../../../tools/simulator/server.js";

/**
 * §4 POST /v1/agents/chat/completions and §6 read by the real `openai` package: what an
 * OpenAI-compatible client assembles must be the run's answer, exactly.
 */

let sim: RunningSimulator;
let client: OpenAI;

beforeEach(async () => {
  sim = await startSimulator({
    queueDelayMs: 0,
    answer: { tokensPerSecond: Infinity, length: 1500 },
  });
  client = new OpenAI({ apiKey: "person-token", baseURL: `${sim.url}/v1/agents`, maxRetries: 0 });
});
afterEach(async () => {
  await sim.close();
});

async function streamedText(params: ChatCompletionCreateParamsStreaming): Promise<string> {
  const stream = await client.chat.completions.create(params);
  let text = "";
  for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? "";
  return text;
}

describe("§4 chat completions through the openai client", () => {
  it("streams a generated Markdown answer that equals the run's output", async () => {
    const params: ChatCompletionCreateParamsStreaming & { assistantId: string } = {
      assistantId: "asst-1",
      model: "assistant-standard",
      stream: true,
      messages: [{ role: "user", content: "How should I retry requests?" }],
    };
    const text = await streamedText(params);
    const [run] = sim.control.runs();
    expect(run?.status).toBe("completed");
    expect(text).toBe(run?.output?.[0]?.text);
    expect(text.length).toBeGreaterThan(1400);
    expect(text).toContain("```");
  });

  it("keeps multibyte characters and newlines intact", async () => {
    sim.control.enqueueAnswer({ chunks: ["Ünï", "cödé 🎉\n", "\n日本語", "\r\nend"] });
    const params: ChatCompletionCreateParamsStreaming & { assistantId: string } = {
      assistantId: "asst-1",
      model: "m",
      stream: true,
      messages: [{ role: "user", content: "q" }],
    };
    expect(await streamedText(params)).toBe("Ünïcödé 🎉\n\n日本語\r\nend");
  });

  it("continues a thread by threadId", async () => {
    const first: ChatCompletionCreateParamsStreaming & { assistantId: string } = {
      assistantId: "asst-1",
      model: "m",
      stream: true,
      messages: [{ role: "user", content: "one" }],
    };
    await streamedText(first);
    const threadId = sim.control.threads()[0]?.id ?? "";
    sim.control.enqueueAnswer({ text: "second answer" });
    const second: ChatCompletionCreateParamsStreaming & { threadId: string } = {
      threadId,
      model: "m",
      stream: true,
      messages: [{ role: "user", content: "two" }],
    };
    expect(await streamedText(second)).toBe("second answer");
    expect(sim.control.counts()).toEqual({ threads: 1, messages: 2, runs: 2 });
  });

  it("parses the non-streamed response: finish_reason queued and the ids to follow", async () => {
    sim.control.enqueueAnswer({ text: "Queued answer." });
    const params: ChatCompletionCreateParamsNonStreaming & { assistantId: string } = {
      assistantId: "asst-1",
      model: "assistant-standard",
      messages: [{ role: "user", content: "Hello there" }],
    };
    const completion = await client.chat.completions.create(params);
    expect(completion.object).toBe("chat.completion");
    expect(completion.choices[0]?.message.content).toBe("");
    expect(completion.choices[0]?.finish_reason as string).toBe("queued");
    expect(completion.usage?.completion_tokens).toBe(0);
    const ids = completion as unknown as { thread_id: string; message_id: string; run_id: string };
    const run = await sim.control.waitForRunEnd(ids.run_id);
    expect(run).toMatchObject({
      threadId: ids.thread_id,
      triggerMessageId: ids.message_id,
      output: [{ type: "text", text: "Queued answer." }],
    });
  });

  it("surfaces a refusal (tool message) as a 400 API error", async () => {
    const params: ChatCompletionCreateParamsNonStreaming & { assistantId: string } = {
      assistantId: "asst-1",
      model: "m",
      messages: [
        { role: "user", content: "q" },
        { role: "tool", content: "result", tool_call_id: "call_1" },
      ],
    };
    await expect(client.chat.completions.create(params)).rejects.toMatchObject({ status: 400 });
    expect(sim.control.counts().runs).toBe(0);
  });
});
