import { describe, expect, it } from "vitest";
import { slackTextToPlain, stripBotMention } from "../../../src/slack/receiving/inbound-text.js";

describe("slackTextToPlain", () => {
  const lookup = {
    user: (id: string) => ({ U1: "ada", U2: "Tom & Jerry" })[id],
    channel: (id: string) => (id === "C9" ? "random" : undefined),
  };

  it("writes user mentions as @name, or @id when the name is unknown", () => {
    expect(slackTextToPlain("hi <@U1> and <@U3>", lookup)).toBe("hi @ada and @U3");
    expect(slackTextToPlain("hi <@U1>")).toBe("hi @U1");
    expect(slackTextToPlain("<@U4|bob> there", lookup)).toBe("@bob there");
    // A looked-up name is used as it is, not decoded again.
    expect(slackTextToPlain("<@U2>", lookup)).toBe("@Tom & Jerry");
  });

  it("writes channels as #name", () => {
    expect(slackTextToPlain("see <#C123|general>", lookup)).toBe("see #general");
    expect(slackTextToPlain("see <#C9>", lookup)).toBe("see #random");
    expect(slackTextToPlain("see <#C8>", lookup)).toBe("see #C8");
  });

  it("writes broadcasts and user groups as @mentions", () => {
    expect(slackTextToPlain("<!here> <!channel> <!everyone>")).toBe("@here @channel @everyone");
    expect(slackTextToPlain("<!here|@here> look")).toBe("@here look");
    expect(slackTextToPlain("ping <!subteam^S1|@team>")).toBe("ping @team");
    expect(slackTextToPlain("ping <!subteam^S1>")).toBe("ping @S1");
    expect(slackTextToPlain("<!date^1392734382^{date_short}|Feb 18, 2014>")).toBe("Feb 18, 2014");
  });

  it("writes links as label (url), or just the url", () => {
    expect(slackTextToPlain("read <https://x.io/a|the docs>")).toBe(
      "read the docs (https://x.io/a)",
    );
    expect(slackTextToPlain("<https://x.io/a>")).toBe("https://x.io/a");
    expect(slackTextToPlain("<https://x.io/a|https://x.io/a>")).toBe("https://x.io/a");
    expect(slackTextToPlain("<http://example.com|example.com>")).toBe("example.com");
    expect(slackTextToPlain("<https://x.io/?a=1&amp;b=2|q &amp; a>")).toBe(
      "q & a (https://x.io/?a=1&b=2)",
    );
  });

  it("writes mail links as the address", () => {
    expect(slackTextToPlain("mail <mailto:a@b.c|a@b.c>")).toBe("mail a@b.c");
    expect(slackTextToPlain("<mailto:a@b.c>")).toBe("a@b.c");
    expect(slackTextToPlain("<mailto:a@b.c|Ada>")).toBe("Ada (a@b.c)");
  });

  it("decodes entities after reading the links, so escaped brackets stay text", () => {
    expect(slackTextToPlain("a &amp; b &lt; c &gt; d")).toBe("a & b < c > d");
    expect(slackTextToPlain("&lt;@U1&gt; is not a mention", lookup)).toBe("<@U1> is not a mention");
    expect(slackTextToPlain("&amp;lt; stays")).toBe("&lt; stays");
    expect(slackTextToPlain("if (a &lt; b) { x = y &amp;&amp; z }")).toBe(
      "if (a < b) { x = y && z }",
    );
  });

  it("leaves plain text, Markdown and newlines alone", () => {
    const text = "## Title\n\n**bold** `code`\n- item";
    expect(slackTextToPlain(text)).toBe(text);
  });
});

describe("stripBotMention", () => {
  it("removes every mention of the bot and trims", () => {
    expect(stripBotMention("<@UBOT> what is 2+2?", "UBOT")).toBe("what is 2+2?");
    expect(stripBotMention("  hey <@UBOT|assistant>   can you help <@UBOT>", "UBOT")).toBe(
      "hey can you help",
    );
    expect(stripBotMention("<@UBOT>: summarise this", "UBOT")).toBe("summarise this");
    expect(stripBotMention("<@UBOT>", "UBOT")).toBe("");
  });

  it("keeps other people's mentions and the text's newlines", () => {
    expect(stripBotMention("<@UBOT> ask <@U1>\nthen <@UBOTX>", "UBOT")).toBe(
      "ask <@U1>\nthen <@UBOTX>",
    );
  });
});
