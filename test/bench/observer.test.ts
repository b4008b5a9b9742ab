import { describe, expect, it } from "vitest";
import { markdownChars } from "../../bench/observer.js";

describe("bench observer", () => {
  it("counts the answer Markdown a reply shows, not its status line or buttons", () => {
    const blocks = [
      { type: "markdown", text: "## Plan\n\n- one" },
      { type: "context", elements: [{ type: "mrkdwn", text: ":writing_hand: Writing…" }] },
      { type: "actions", elements: [{ type: "button", action_id: "stop_run" }] },
    ];
    expect(markdownChars(blocks)).toBe("## Plan\n\n- one".length);
    expect(
      markdownChars([
        { type: "markdown", text: "ab" },
        { type: "markdown", text: "c" },
      ]),
    ).toBe(3);
    expect(markdownChars(undefined)).toBe(0);
    expect(markdownChars("not blocks")).toBe(0);
  });
});
