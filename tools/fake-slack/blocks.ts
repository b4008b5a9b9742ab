/**
 * Message content as Slack judges and shows it: the size rules that make `chat.postMessage`
 * and `chat.update` fail, and the text a person actually sees in a message.
 */
import { contextActionsError } from "./context-actions.js";
import { tablesError } from "./table-block.js";

export interface Block {
  type: string;
  [key: string]: unknown;
}

/** What a message carries: `text` is the notification fallback once blocks are present. */
export interface MessageContent {
  text: string;
  blocks?: Block[];
}

/** Slack truncates or refuses `text` past this many characters. */
export const MAX_TEXT_CHARS = 40_000;
/** All `markdown` blocks of one message together, and the `markdown_text` argument. */
export const MAX_MARKDOWN_CHARS = 12_000;
export const MAX_SECTION_TEXT_CHARS = 3_000;
export const MAX_BLOCKS = 50;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function stringAt(value: unknown, key: string): string | undefined {
  if (!isRecord(value)) return undefined;
  const found = value[key];
  return typeof found === "string" ? found : undefined;
}

/**
 * Reads the `blocks` argument. Undefined when absent; a Slack error code when it is not a
 * JSON array of objects with a `type` (form bodies carry it as a JSON string).
 */
export function parseBlocks(raw: unknown): Block[] | undefined | { error: string } {
  if (raw === undefined || raw === "") return undefined;
  let value = raw;
  if (typeof raw === "string") {
    try {
      value = JSON.parse(raw);
    } catch {
      return { error: "invalid_blocks_format" };
    }
  }
  if (!Array.isArray(value)) return { error: "invalid_blocks_format" };
  const blocks: Block[] = [];
  for (const item of value) {
    if (!isRecord(item) || typeof item.type !== "string") return { error: "invalid_blocks" };
    blocks.push(item as Block);
  }
  return blocks;
}

/** The Slack error a message with this content gets, or undefined when it is acceptable. */
export function contentError(content: MessageContent): string | undefined {
  if (content.text.length > MAX_TEXT_CHARS) return "msg_too_long";
  const blocks = content.blocks ?? [];
  if (blocks.length > MAX_BLOCKS) return "invalid_blocks";
  const tables = tablesError(blocks);
  if (tables !== undefined) return tables;
  let markdownChars = 0;
  for (const block of blocks) {
    const misplaced = contextActionsError(block);
    if (misplaced !== undefined) return misplaced;
    if (block.type === "markdown") markdownChars += (stringAt(block, "text") ?? "").length;
    if (block.type === "section") {
      const text = stringAt(block.text, "text") ?? "";
      if (text.length > MAX_SECTION_TEXT_CHARS) return "invalid_blocks";
    }
  }
  if (markdownChars > MAX_MARKDOWN_CHARS) return "msg_too_long";
  return undefined;
}

/** Decodes the three entities Slack's mrkdwn requires (`&amp; &lt; &gt;`) in one pass. */
export function decodeEntities(text: string): string {
  return text.replace(/&(amp|lt|gt);/g, (_match, name: string) =>
    name === "amp" ? "&" : name === "lt" ? "<" : ">",
  );
}

/** Inline rich-text elements as a person reads them. */
function richInline(element: unknown): string {
  if (!isRecord(element)) return "";
  switch (element.type) {
    case "text":
      return stringAt(element, "text") ?? "";
    case "link":
      return stringAt(element, "text") ?? stringAt(element, "url") ?? "";
    case "emoji":
      return `:${stringAt(element, "name") ?? ""}:`;
    case "user":
      return `<@${stringAt(element, "user_id") ?? ""}>`;
    case "channel":
      return `<#${stringAt(element, "channel_id") ?? ""}>`;
    default:
      return "";
  }
}

/** A rich-text container (section, preformatted, quote, list) as lines of text. */
function richContainer(container: unknown): string {
  if (!isRecord(container) || !Array.isArray(container.elements)) return "";
  if (container.type === "rich_text_list") {
    return container.elements.map(richContainer).join("\n");
  }
  return container.elements.map(richInline).join("");
}

/** A table cell as a person reads it: raw text as written, rich text as its runs. */
function cellText(cell: unknown): string {
  if (!isRecord(cell)) return "";
  if (cell.type === "raw_text") return stringAt(cell, "text") ?? "";
  return Array.isArray(cell.elements) ? cell.elements.map(richContainer).join("\n") : "";
}

/** A table as lines, one a row, its cells between " | " (how a reader of a transcript tells them apart). */
function tableText(block: Block): string {
  if (!Array.isArray(block.rows)) return "";
  return block.rows
    .map((row) => (Array.isArray(row) ? row.map(cellText).join(" | ") : ""))
    .join("\n");
}

function blockText(block: Block): string[] {
  switch (block.type) {
    case "table":
      return [tableText(block)];
    case "markdown":
      return [stringAt(block, "text") ?? ""];
    case "section": {
      const parts: string[] = [];
      const text = stringAt(block.text, "text");
      if (text !== undefined) parts.push(text);
      if (Array.isArray(block.fields)) {
        for (const field of block.fields) parts.push(stringAt(field, "text") ?? "");
      }
      return parts;
    }
    case "header":
      return [stringAt(block.text, "text") ?? ""];
    case "context":
      return Array.isArray(block.elements)
        ? block.elements.flatMap((element) => {
            const text = stringAt(element, "text");
            return text === undefined ? [] : [text];
          })
        : [];
    case "rich_text":
      return Array.isArray(block.elements) ? block.elements.map(richContainer) : [];
    // What a native stream shows (streams.ts): a task card's title, a plan's title.
    case "task_card":
    case "plan":
      return [stringAt(block, "title") ?? ""];
    default:
      // Buttons, dividers and images carry no reading text.
      return [];
  }
}

/**
 * The text a person sees: the text of the blocks joined by "\n" when there are blocks,
 * otherwise `text`; mrkdwn entities decoded in both.
 */
export function visibleText(message: MessageContent): string {
  const blocks = message.blocks ?? [];
  const raw = blocks.length > 0 ? blocks.flatMap(blockText).join("\n") : message.text;
  return decodeEntities(raw);
}
