/**
 * What the chat shows for each entry of the sandbox thread: the person's messages, the
 * bot's replies (their Markdown, the status line, a "[Stop]" hint while the Stop button is
 * there), slash-command answers only the person sees, and the sandbox's own notes. Pure:
 * entries in, styled paragraphs out.
 */
import type { Block } from "../tools/fake-slack/blocks.js";
import type { Paragraph, Segment, Style } from "./layout.js";

export type ChatItem =
  /** A message the person posted (Slack mrkdwn, as stored). */
  | { kind: "person"; ts: string; text: string }
  /** One of the bot's reply messages, as Slack stores it now. */
  | { kind: "reply"; ts: string; text: string; blocks?: Block[] }
  /** A slash command the person typed. */
  | { kind: "command"; ts: string; text: string }
  /** An ephemeral answer (mrkdwn) only the person sees. */
  | { kind: "ephemeral"; ts: string; text: string }
  /** The sandbox's own note, e.g. a request that failed. */
  | { kind: "sandbox"; ts: string; text: string; error?: boolean };

export interface ViewContext {
  botUserId: string;
  userId: string;
}

const STOP_ACTION_ID = "stop_run";
const EMOJI = /^(hourglass_flowing_sand|writing_hand|warning|x|black_square_for_stop)$/;

interface Element {
  type?: unknown;
  text?: unknown;
  action_id?: unknown;
  value?: unknown;
  elements?: unknown;
}

const elementsOf = (block: Block): Element[] =>
  Array.isArray(block.elements) ? (block.elements as Element[]) : [];

/** The turn id on the reply's Stop button, or undefined when it has none. */
export function stopTurnOf(item: ChatItem): string | undefined {
  if (item.kind !== "reply") return undefined;
  for (const block of item.blocks ?? []) {
    if (block.type !== "actions") continue;
    for (const element of elementsOf(block)) {
      if (element.action_id === STOP_ACTION_ID && typeof element.value === "string") {
        return element.value;
      }
    }
  }
  return undefined;
}

const decode = (text: string) =>
  text.replace(/&(amp|lt|gt);/g, (_m, name: string) =>
    name === "amp" ? "&" : name === "lt" ? "<" : ">",
  );

/** A `<…>` entity of mrkdwn as a person reads it. */
function entity(inner: string, ctx: ViewContext): string {
  const [target = "", label] = inner.split("|", 2);
  if (target.startsWith("@")) {
    const id = target.slice(1);
    if (id === ctx.userId) return "@you";
    if (id === ctx.botUserId) return "@assistant";
    return `@${label ?? id}`;
  }
  if (target.startsWith("#")) return `#${label ?? target.slice(1)}`;
  if (target.startsWith("!")) return `@${label ?? target.slice(1).split("^")[0]}`;
  return decode(label ?? target);
}

/** One line of mrkdwn as styled segments: links and mentions resolved, *bold* shown bold. */
function inline(line: string, style: Style, ctx: ViewContext): Segment[] {
  const segments: Segment[] = [];
  const pattern = /<([^>\n]+)>|\*([^*\n]+)\*|:([a-z_]+): ?/g;
  let at = 0;
  for (const match of line.matchAll(pattern)) {
    const [whole, link, bold, emoji] = match;
    if (emoji !== undefined && !EMOJI.test(emoji)) continue;
    segments.push({ text: decode(line.slice(at, match.index)), style });
    if (link !== undefined) segments.push({ text: entity(link, ctx), style });
    if (bold !== undefined) {
      const inner = inline(bold, style, ctx)
        .map((s) => s.text)
        .join("");
      segments.push({ text: inner, style: style === "plain" ? "bold" : style });
    }
    at = match.index + whole.length;
  }
  segments.push({ text: decode(line.slice(at)), style });
  return segments.filter((s) => s.text !== "");
}

export function mrkdwnLines(text: string, style: Style, ctx: ViewContext): Segment[][] {
  return text.split("\n").map((line) => inline(line, style, ctx));
}

/** The answer's Markdown as it arrives: shown as written, headings bold, fences dim. */
function markdownLines(text: string): Segment[][] {
  return text.split("\n").map((line) => {
    const style: Style = /^#{1,6}\s/.test(line)
      ? "bold"
      : /^\s*(```|~~~)/.test(line)
        ? "dim"
        : "plain";
    return line === "" ? [] : [{ text: line, style }];
  });
}

function replyLines(item: Extract<ChatItem, { kind: "reply" }>, ctx: ViewContext): Segment[][] {
  const blocks = item.blocks ?? [];
  if (blocks.length === 0) return mrkdwnLines(item.text, "plain", ctx);
  const lines: Segment[][] = [];
  for (const block of blocks) {
    if (block.type === "markdown" && typeof block.text === "string") {
      lines.push(...markdownLines(block.text));
    } else if (block.type === "context") {
      for (const element of elementsOf(block)) {
        if (typeof element.text !== "string") continue;
        const [first = [], ...rest] = mrkdwnLines(element.text, "dim", ctx);
        lines.push([{ text: "· ", style: "dim" }, ...first], ...rest);
      }
    } else if (block.type === "section") {
      const text = (block.text as { text?: unknown } | undefined)?.text;
      if (typeof text === "string") lines.push(...mrkdwnLines(text, "error", ctx));
    }
  }
  if (stopTurnOf(item) !== undefined) {
    const stop: Segment = { text: "[Stop]", style: "hint" };
    const last = lines.at(-1);
    if (last && last[0]?.style === "dim") last.push({ text: "  ", style: "plain" }, stop);
    else lines.push([stop]);
  }
  return lines.length > 0 ? lines : [[{ text: "…", style: "dim" }]];
}

/** The paragraph one chat entry shows. */
export function paragraphOf(item: ChatItem, ctx: ViewContext): Paragraph {
  switch (item.kind) {
    case "person":
      return {
        label: { text: "you> ", style: "you" },
        lines: mrkdwnLines(item.text, "plain", ctx),
      };
    case "command":
      return {
        label: { text: "you> ", style: "you" },
        lines: [[{ text: item.text, style: "plain" }]],
      };
    case "reply":
      return { label: { text: "assistant> ", style: "assistant" }, lines: replyLines(item, ctx) };
    case "ephemeral":
      return {
        label: { text: "(only you) ", style: "dim" },
        lines: mrkdwnLines(item.text, "dim", ctx),
      };
    case "sandbox":
      return {
        label: { text: "(sandbox) ", style: "dim" },
        lines: [[{ text: item.text, style: item.error ? "error" : "dim" }]],
      };
  }
}

const plainOf = (lines: Segment[][]) =>
  lines.map((line) => line.map((s) => s.text).join("")).join("\n");

/**
 * The answer in the replies, for scripts: each message's Markdown, the parts of a long
 * answer joined by a newline (as they were split). Status lines are left out.
 */
export function answerText(replies: ChatItem[], ctx: ViewContext): string {
  return replies
    .flatMap((item) => {
      if (item.kind !== "reply") return [];
      const blocks = item.blocks ?? [];
      if (blocks.length === 0) return [plainOf(mrkdwnLines(item.text, "plain", ctx))];
      const markdown = blocks.filter((b) => b.type === "markdown" && typeof b.text === "string");
      return markdown.length === 0 ? [] : [markdown.map((b) => String(b.text)).join("\n")];
    })
    .join("\n");
}

/** The status lines of a reply (context and section blocks) as plain text. */
export function statusText(item: ChatItem, ctx: ViewContext): string {
  if (item.kind !== "reply") return "";
  const lines: string[] = [];
  for (const block of item.blocks ?? []) {
    const texts =
      block.type === "context"
        ? elementsOf(block).map((e) => e.text)
        : block.type === "section"
          ? [(block.text as { text?: unknown } | undefined)?.text]
          : [];
    for (const text of texts) {
      if (typeof text === "string") lines.push(plainOf(mrkdwnLines(text, "plain", ctx)));
    }
  }
  return lines.join("\n");
}
