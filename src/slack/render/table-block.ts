import type { types as Slack } from "@slack/bolt";
import { classifyCallFailure } from "../web-api/call-failure.js";
import { firstContent } from "./answer-layout.js";
import { findTables, type MarkdownTable } from "./markdown-tables.js";
import { richCell } from "./table-cell.js";

/**
 * A Markdown table as Slack's `table` block, within the block's limits. Slack's Block Kit
 * reference (table block): at most 100 rows, each of at most 20 cells, `raw_text` or
 * `rich_text` cells, at most 20 `column_settings` (`align` left, center or right). Reported by
 * several projects and in Slack's usage notes: one table per message, shown at the bottom of
 * it. So a table becomes a block only where it ends its message's answer text (the final split
 * cuts a message after each such table: answer-split.ts), and a table over the limits stays
 * Markdown text: the answer is never cut short or reordered for a table.
 */

export const TABLE_MAX_ROWS = 100;
export const TABLE_MAX_COLUMNS = 20;

/** Whether Slack's table block can show `table` whole: its rows and columns within limits. */
export function fitsTableBlock(table: MarkdownTable): boolean {
  const width = table.rows[0]?.length ?? 0;
  return table.rows.length <= TABLE_MAX_ROWS && width >= 1 && width <= TABLE_MAX_COLUMNS;
}

/**
 * The table that closes `body` and fits a block (only whitespace after it), if any: what the
 * final layout of that message shows as a table block.
 */
export function closingTable(body: string): MarkdownTable | undefined {
  const last = findTables(body).at(-1);
  if (!last || !fitsTableBlock(last)) return undefined;
  return firstContent(body, last.end) === body.length ? last : undefined;
}

/**
 * The block of a table that fits (fitsTableBlock): the header row first, alignment kept, rich
 * text cells (table-cell.ts; raw_text cells were reported to fail at Slack: SlackNet#246).
 */
export function tableBlock(table: MarkdownTable): Slack.TableBlock {
  const block: Slack.TableBlock = {
    type: "table",
    rows: table.rows.map((row) => row.map(richCell)),
  };
  if (table.align.some((align) => align !== undefined)) {
    block.column_settings = table.align.map((align) => ({ align: align ?? "left" }));
  }
  return block;
}

/**
 * Whether Slack refused a message because of its table block: the payload holds one and Slack
 * said `invalid_blocks`. The caller sends the part again with its table as text.
 */
export function refusedTable(error: unknown, payload: { blocks: readonly { type: string }[] }) {
  if (!payload.blocks.some((block) => block.type === "table")) return false;
  const failure = classifyCallFailure(error);
  return failure.kind === "permanent" && failure.reason === "invalid_blocks";
}
