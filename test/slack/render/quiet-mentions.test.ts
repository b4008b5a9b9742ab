import { describe, expect, it } from "vitest";
import {
  quietMarkdown,
  quietMessage,
  quietSpecialMentions,
} from "../../../src/slack/render/quiet-mentions.js";

describe("quietSpecialMentions", () => {
  it("writes each special mention as the words Slack shows for it", () => {
    expect(quietSpecialMentions("<!channel> <!here> <!everyone> <!group>")).toBe(
      "@channel @here @everyone @group",
    );
    expect(quietSpecialMentions("<!here|here> <!channel|everyone!>")).toBe("@here @channel");
    expect(quietSpecialMentions("ask <!subteam^S123|@team> or <!subteam^S456>")).toBe(
      "ask @team or @S456",
    );
    expect(quietSpecialMentions("due <!date^1392734382^{date_short}|Feb 18, 2014>.")).toBe(
      "due Feb 18, 2014.",
    );
    expect(quietSpecialMentions("<!somethingnew>")).toBe("somethingnew");
  });

  it("leaves no mention behind, however the markup is nested", () => {
    for (const sneaky of ["<<!here>!channel>", "<!<!channel>here>", "<!here|<!channel>>"]) {
      expect(quietSpecialMentions(sneaky)).not.toMatch(/<!/);
    }
  });

  it("leaves everything else as it was: escaped markup, people, links, plain words", () => {
    const text = "&lt;!channel&gt; <@U1> <#C1|general> <https://x.test|x> @here 1 < 2 > 0";
    expect(quietSpecialMentions(text)).toBe(text);
  });
});

describe("quietMarkdown", () => {
  it("also writes people as words: their label, else their id", () => {
    expect(quietMarkdown("thanks <@U123> and <@U456|ada>, cc <!here>")).toBe(
      "thanks @U123 and @ada, cc @here",
    );
    expect(quietMarkdown("<@U1|<!channel>>")).not.toMatch(/<[!@]/);
    expect(quietMarkdown("<!ch<@U1|ann>el>")).not.toMatch(/<[!@]/);
  });
});

describe("quietMessage", () => {
  it("quiets a table block's cells as the assistant's words, people included", () => {
    const cell = (text: string) => ({
      type: "rich_text",
      elements: [{ type: "rich_text_section", elements: [{ type: "text", text }] }],
    });
    const table = { type: "table", rows: [[cell("<@U1|ada> and <!here>"), cell("plain")]] };
    const quiet = quietMessage({ text: "t", blocks: [table] });
    expect(quiet.blocks).toEqual([
      { type: "table", rows: [[cell("@ada and @here"), cell("plain")]] },
    ]);
  });

  it("quiets every text Slack renders, and only those", () => {
    const loud = "<!channel> see <@U1>";
    const message = quietMessage({
      channel: "C1",
      text: loud,
      markdown_text: loud,
      metadata: { event_type: "e", event_payload: { note: "<!channel>" } },
      blocks: [
        { type: "markdown", text: loud },
        { type: "section", text: { type: "mrkdwn", text: loud } },
        {
          type: "rich_text",
          elements: [
            {
              type: "rich_text_section",
              elements: [
                { type: "broadcast", range: "everyone" },
                { type: "usergroup", usergroup_id: "S1" },
                { type: "text", text: " hi" },
              ],
            },
          ],
        },
      ],
    });
    expect(message).toEqual({
      channel: "C1",
      // The bot's own mrkdwn may name a person on purpose; the assistant's Markdown never.
      text: "@channel see <@U1>",
      markdown_text: "@channel see @U1",
      metadata: { event_type: "e", event_payload: { note: "<!channel>" } },
      blocks: [
        { type: "markdown", text: "@channel see @U1" },
        { type: "section", text: { type: "mrkdwn", text: "@channel see <@U1>" } },
        {
          type: "rich_text",
          elements: [
            {
              type: "rich_text_section",
              elements: [
                { type: "text", text: "@everyone" },
                { type: "text", text: "@S1" },
                { type: "text", text: " hi" },
              ],
            },
          ],
        },
      ],
    });
  });
});
