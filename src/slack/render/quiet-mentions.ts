/**
 * Nothing the bot posts notifies anyone. Slack reads `<!here>`, `<!channel>`, `<!everyone>`,
 * `<!subteam^ID>` (a user group) and `<@U…>` as mentions wherever it parses its `<…>`
 * markup: in `text`, in mrkdwn, and (reported; Slack's reference does not say) in `markdown`
 * blocks. An answer can write that markup itself, or repeat it from a quoted thread, so every
 * message payload passes through `quietMessage` (web-api.ts) on its way out.
 *
 * A mention becomes the words Slack would have shown for it, as plain text: `<!channel>`
 * still reads "@channel" and `<!subteam^S1|@team>` "@team", but notifies nobody. Plain
 * "@channel" is only linked when a call asks for `link_names`, which the bot never does.
 */

/** `<!…>`: Slack's special commands (here, channel, everyone, subteam^…, date^…, …). */
const SPECIAL = /<!([^<>|]*)(?:\|([^<>]*))?>/g;
/** `<@U…>` or `<@U…|label>`: a person (or a bot) mentioned. */
const USER = /<@([^<>|]*)(?:\|([^<>]*))?>/g;

/** The words a special command shows: "@here", the user group's handle, a date's fallback. */
function specialWords(command: string, label: string | undefined): string {
  const named = label?.trim();
  if (/^(here|channel|everyone|group)$/.test(command)) return `@${command}`;
  const subteam = /^subteam\^(.*)$/.exec(command);
  if (subteam) return `@${named?.replace(/^@/, "") || subteam[1]}`;
  // A date (or any command Slack adds later) shows its fallback text, else the command.
  return named || command;
}

/**
 * Replaces every match of `pattern` until none is left: a replacement never contains `<` or
 * `>`, so each round removes markup and `<<!here>!channel>` cannot leave a mention behind.
 */
function untilQuiet(text: string, pattern: RegExp, words: (a: string, b?: string) => string) {
  let out = text;
  for (let before = ""; before !== out; ) {
    before = out;
    out = out.replace(pattern, (_m, target: string, label?: string) => words(target, label));
  }
  return out;
}

/** Special mentions (`<!here>`, `<!subteam^…>`, …) as the words they show. */
export function quietSpecialMentions(text: string): string {
  return text.includes("<!") ? untilQuiet(text, SPECIAL, specialWords) : text;
}

/**
 * The assistant's Markdown with every mention as words: special ones, and people (`<@U1>` →
 * "@U1", `<@U1|ada>` → "@ada"). The bot's own mrkdwn may mention a person on purpose (the
 * one who pressed Stop); the assistant's words never do.
 */
export function quietMarkdown(text: string): string {
  const special = quietSpecialMentions(text);
  if (!special.includes("<@")) return special;
  const people = untilQuiet(
    special,
    USER,
    (id, label) => `@${label?.trim().replace(/^@/, "") || id}`,
  );
  // Words for a person can close a special command the text had split around it.
  return quietSpecialMentions(people);
}

/** The parts of a message payload that Slack renders. */
export interface MessageText {
  text?: string;
  /** Standard Markdown: the assistant's words (a `markdown` block's, streaming's). */
  markdown_text?: string;
  blocks?: unknown[];
  /** A native stream's pieces: Markdown and task cards (the assistant's), or blocks. */
  chunks?: unknown[];
}

/** Rich-text elements that notify: a broadcast (`@here`…) and a user group. */
function quietElement(element: Record<string, unknown>): Record<string, unknown> | undefined {
  if (element.type === "broadcast") return { type: "text", text: `@${String(element.range)}` };
  if (element.type === "usergroup") {
    return { type: "text", text: `@${String(element.usergroup_id)}` };
  }
  return undefined;
}

/** Every string in a block quieted; `markdown` and `table` blocks (the assistant's) of people too. */
function quietBlockValue(value: unknown, markdown: boolean): unknown {
  if (typeof value === "string")
    return markdown ? quietMarkdown(value) : quietSpecialMentions(value);
  if (Array.isArray(value)) return value.map((item) => quietBlockValue(item, markdown));
  if (typeof value !== "object" || value === null) return value;
  const record = value as Record<string, unknown>;
  const replaced = quietElement(record);
  if (replaced) return replaced;
  // A table block's cells are the assistant's words too (reply-blocks.ts).
  const inMarkdown = markdown || record.type === "markdown" || record.type === "table";
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(record)) out[key] = quietBlockValue(field, inMarkdown);
  return out;
}

/**
 * A message payload (post, edit, ephemeral, stream chunks) that mentions nobody: special mentions
 * as words everywhere; people as words in the assistant's Markdown. Other fields are kept.
 */
export function quietMessage<T extends MessageText>(message: T): T {
  const out: T = { ...message };
  if (message.text !== undefined) out.text = quietSpecialMentions(message.text);
  if (message.markdown_text !== undefined) out.markdown_text = quietMarkdown(message.markdown_text);
  if (message.blocks !== undefined) {
    out.blocks = message.blocks.map((block) => quietBlockValue(block, false));
  }
  if (message.chunks !== undefined) {
    // Every string of a Markdown or task chunk is the assistant's; a blocks chunk is blocks.
    out.chunks = message.chunks.map((chunk) =>
      quietBlockValue(chunk, (chunk as { type?: unknown } | null)?.type !== "blocks"),
    );
  }
  return out;
}
