import { describe, expect, it } from "vitest";
import { mentionedUserIds } from "../../../src/slack/admission/user-directory.js";
import { slackTextToPlain, stripBotMention } from "../../../src/slack/receiving/inbound-text.js";
import { itemParts, markupItems } from "../../../src/slack/render/markup.js";

describe("markupItems", () => {
  it("finds each `<…>` item, a stray `<` or `>` being text", () => {
    const text = "a <@U1> b <x <#C1|general> > <!here>";
    const items = [...markupItems(text)].map((item) => ({
      ...item,
      at: text.slice(item.start, item.end),
    }));
    expect(items).toEqual([
      { start: 2, end: 7, inside: "@U1", at: "<@U1>" },
      { start: 13, end: 26, inside: "#C1|general", at: "<#C1|general>" },
      { start: 29, end: 36, inside: "!here", at: "<!here>" },
    ]);
    expect([...markupItems("no items < here")]).toEqual([]);
  });

  it("splits an item at its first bar into target and label", () => {
    expect(itemParts("@U1")).toEqual({ target: "@U1", label: undefined });
    expect(itemParts("https://x.io|a | b")).toEqual({ target: "https://x.io", label: "a | b" });
  });
});

describe("mentionedUserIds", () => {
  it("names the people mentioned, with or without a label, and nothing else", () => {
    expect(mentionedUserIds("<@U1> and <@W2|ada> in <#C1> <!here> <@x> <@U3|>")).toEqual([
      "U1",
      "W2",
      "U3",
    ]);
  });

  it("reads a `<` as the start of an item, as slackTextToPlain does (Slack escapes a typed one)", () => {
    const text = "<@U1|a<@U2>";
    expect(mentionedUserIds(text)).toEqual(["U2"]);
    expect(slackTextToPlain(text, { user: (id) => (id === "U2" ? "bo" : undefined) })).toBe(
      "<@U1|a@bo",
    );
  });
});

/**
 * A person's message is up to 40,000 characters, and its parsers run in the listener, before
 * Slack is acknowledged. Each input below is a megabyte built to make a pattern that is retried
 * at every `<` and runs on to the next `>` do quadratic work. The parsers this replaced took
 * over a minute on each (run once, on a busy machine: 141 s for mentionedUserIds, 64 s for
 * stripBotMention), far past the test timeout; a linear parser takes milliseconds. Nothing is
 * timed here: the answers are the same for both, only the timeout tells them apart.
 */
describe("every parser of a person's Slack markup is linear in the text's length", () => {
  const MEGABYTE = 1_000_000;
  const repeat = (unit: string) => unit.repeat(Math.ceil(MEGABYTE / unit.length));

  it("mentionedUserIds, on a megabyte of unclosed labelled mentions", () => {
    expect(mentionedUserIds(repeat("<@U1|"))).toEqual([]);
  });

  it("stripBotMention, on a megabyte of unclosed labelled mentions of the bot", () => {
    const text = repeat("<@UBOT|");
    expect(stripBotMention(text, "UBOT") === text).toBe(true);
  });

  it("slackTextToPlain, on a megabyte of unclosed items", () => {
    const text = repeat("<@U1|");
    expect(slackTextToPlain(text) === text).toBe(true);
  });
});
