import { describe, expect, it } from "vitest";
import { DEFAULT_SUGGESTED_PROMPTS, loadConfig } from "../src/config.js";

const base = {
  SLACK_BOT_TOKEN: "xoxb-1-secret",
  SLACK_SIGNING_SECRET: "shh",
  ASSISTANT_API_URL: "http://127.0.0.1:8787/",
  ASSISTANT_API_TOKEN: "svc-token",
  ASSISTANT_ID: "asst-1",
};

const prompts = (value: string) =>
  loadConfig({ ...base, SUGGESTED_PROMPTS: value }).agent.suggestedPrompts;

describe("loadConfig: SUGGESTED_PROMPTS", () => {
  it("offers three default prompts under a title when unset", () => {
    expect(loadConfig(base).agent.suggestedPrompts).toEqual(DEFAULT_SUGGESTED_PROMPTS);
    expect(DEFAULT_SUGGESTED_PROMPTS.prompts).toHaveLength(3);
  });

  it("reads a JSON list, or an object naming the list too; [] offers none", () => {
    expect(prompts('[{"title":" Summarise ","message":"Summarise this, please"}]')).toEqual({
      title: "Try asking",
      prompts: [{ title: "Summarise", message: "Summarise this, please" }],
    });
    expect(
      prompts('{"title":"Ask me","prompts":[{"title":"Plan","message":"Plan my week"}]}'),
    ).toEqual({ title: "Ask me", prompts: [{ title: "Plan", message: "Plan my week" }] });
    expect(prompts("[]").prompts).toEqual([]);
  });

  it.each([
    ["not json", "it must be JSON"],
    ['[{"title":"a"}]', 'each prompt must be {"title": "…", "message": "…"}'],
    ['[{"title":"","message":"m"}]', "a prompt's title is empty"],
    [JSON.stringify(Array(5).fill({ title: "t", message: "m" })), "at most four prompts"],
    ['{"title":" ","prompts":[]}', "the list's title is empty"],
    ['"words"', "it must be a list of prompts"],
  ])("refuses %s with one sentence naming the variable", (value, problem) => {
    expect(() => prompts(value)).toThrow(`SUGGESTED_PROMPTS is malformed: `);
    expect(() => prompts(value)).toThrow(problem);
  });
});
